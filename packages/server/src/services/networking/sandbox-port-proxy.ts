import { Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createProxyServer } from 'http-proxy-3';
import type { PreviewTarget } from './preview-ports.ts';
import { PortUpstreams } from './port-upstreams.ts';

const IDLE_UPSTREAM_MS = 1000;

/** The answer to a request the sandbox did not take, in the shape of the API serving it. */
export type BadGatewayBody = (reason: string) => { status: number; body: unknown };

/**
 * HTTP and WebSocket traffic to a port inside a sandbox (the preview gateway's and the E2B port's).
 * Its upstream sockets are closed from the host side before the sandbox is captured or once it is deleted.
 */
export class SandboxPortProxy {
  readonly #proxy;
  // Which sandbox each proxied request is for, so its upstream sockets can be closed before a capture.
  readonly #sandboxOf = new WeakMap<IncomingMessage, string>();
  readonly #socketOf = new WeakMap<IncomingMessage, Socket>();
  readonly #upstreams = new PortUpstreams();

  constructor(badGateway: BadGatewayBody) {
    // Kept-alive connections to sandboxes: a fresh TCP handshake per request doubled the overhead. An idle
    // one is closed after a second, before the sandbox's server would (Node's 5 s, gunicorn's 2 s): the side
    // that closes first keeps TIME_WAIT, which gVisor cannot checkpoint for a minute.
    this.#proxy = createProxyServer({ xfwd: true, proxyTimeout: 0, agent: new Agent({ keepAlive: true, maxSockets: 64, timeout: IDLE_UPSTREAM_MS }) });
    const track = (req: IncomingMessage, socket: Socket) => {
      this.#socketOf.set(req, socket);
      const id = this.#sandboxOf.get(req);
      if (id) this.#upstreams.track(id, socket);
    };
    // HTTP requests are told with their socket; an upgrade before it has one.
    this.#proxy.on('proxyReq', (_proxyReq, req, _res, _options, socket) => track(req, socket));
    this.#proxy.on('proxyReqWs', (proxyReq, req) => proxyReq.once('socket', (socket: Socket) => track(req, socket)));
    // An answer cut off upstream (the sandbox deleted or captured mid-stream) is cut off for the client too:
    // the proxy would leave it waiting forever for the rest, where it should see the connection end.
    this.#proxy.on('proxyRes', (proxyRes, _req, res) => {
      proxyRes.once('close', () => {
        if (!proxyRes.complete) res.destroy();
      });
    });
    this.#proxy.on('error', (err, req, res) => {
      // A request the platform cut (its sandbox deleted or captured before it answered) ends with the
      // connection, as one cut mid-answer does: clients read that as the sandbox gone, not as a refusal.
      if (this.#upstreams.wasCut(this.#socketOf.get(req))) {
        res.destroy();
        return;
      }
      const { status, body } = badGateway(`the sandbox did not answer on this port: ${(err as NodeJS.ErrnoException).code ?? err.message}`);
      if ('writeHead' in res) {
        if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      } else {
        (res as Socket).destroy();
      }
    });
  }

  web(req: IncomingMessage, res: ServerResponse, target: PreviewTarget): void {
    this.#sandboxOf.set(req, target.sandboxId);
    this.#proxy.web(req, res, { target: { host: target.host, port: target.port } });
  }

  ws(req: IncomingMessage, socket: Socket, head: Buffer, target: PreviewTarget): void {
    this.#sandboxOf.set(req, target.sandboxId);
    this.#proxy.ws(req, socket, head, { target: { host: target.host, port: target.port } });
  }

  /** Sees each sandbox's answer before it is passed on (its headers may still be changed). */
  onResponse(listener: (proxyRes: IncomingMessage, req: IncomingMessage) => void): void {
    this.#proxy.on('proxyRes', listener);
  }

  /** Closes the sandbox's upstream sockets; how many there were. */
  close(sandboxId: string): number {
    return this.#upstreams.close(sandboxId);
  }
}
