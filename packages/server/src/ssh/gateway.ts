import { createRequire } from 'node:module';
import { type AddressInfo, createServer, type Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { constants } from 'node:os';
import ssh2, { type AuthContext, type Connection, type Server as SshServer, type ServerChannel, type Session, type SFTPWrapper } from 'ssh2';
import type { Logger } from 'pino';
import type { AgentProcess, ExitInfo } from '../runtime/agent-client.ts';
import type { FileService } from '../services/data-plane/files.ts';
import type { SshAccess } from '../services/ssh/ssh-access.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';
import { relayConnection, type SshRelayTarget } from './relay.ts';
import { serveSftp } from './sftp.ts';

// ssh2 is CommonJS: its named exports are read off the default export.
const { Server, utils } = ssh2;

/** A connection that has not logged in by then is dropped (half-open and idle pre-auth clients hold nothing for long). */
const LOGIN_DEADLINE_MS = 30_000;
/** Keepalives find clients that vanished without a FIN; after this many unanswered the connection is dropped. */
const KEEPALIVE_MS = 15_000;
const KEEPALIVE_MISSES = 4;
const METHODS: AuthContext['method'][] = ['publickey', 'password'];
/** Environment a client may pass (ssh's SendEnv): locale only, as OpenSSH's default AcceptEnv. */
const ACCEPTED_ENV = /^(LANG|LC_[A-Z_]+)$/;

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name.replace(/^SIG/, '')]));

/** ssh2's SFTP stream, unlike its other channels, has no exit(): the status is sent on its channel the way Channel.exit sends it. */
function sftpExit(sftp: SFTPWrapper, status: number): void {
  const ch = sftp as unknown as { outgoing: { id: number; state: string }; _protocol: { exitStatus(id: number, status: number): void } };
  if (ch.outgoing.state === 'open') ch._protocol.exitStatus(ch.outgoing.id, status);
}

export interface SshGatewayDeps {
  access: SshAccess;
  files: FileService;
  hostKey: string;
  log: Logger;
  /** An API replica's: logins are relayed to the node holding the sandbox instead of served here. */
  relay?: SshRelayTarget;
}

/**
 * The SSH gateway: `ssh <sandbox-id>@host` logs in to a sandbox as `user`. Shells and commands run
 * through the sandbox's agent (a pty when asked), the sftp subsystem (and so scp) maps onto the
 * data plane's file operations, and direct-tcpip (ssh -L) connects to a port on the sandbox's address.
 */
export class SshGateway {
  readonly #deps: SshGatewayDeps;
  readonly #server: SshServer;
  readonly #net: NetServer;
  readonly #sockets = new Set<Socket | Duplex>();

  constructor(deps: SshGatewayDeps) {
    this.#deps = deps;
    if (!nativeCiphers()) {
      deps.log.warn(
        "ssh: ssh2's native cipher binding did not load (built for another Node.js?), so SSH encrypts in JavaScript at a fraction of the speed; rebuild it with Node 24's headers: npm_config_nodedir=<node 24 dir> npm rebuild ssh2",
      );
    }
    this.#server = new Server({ hostKeys: [deps.hostKey], ident: 'Sandpit', keepaliveInterval: KEEPALIVE_MS, keepaliveCountMax: KEEPALIVE_MISSES }, (client, info) =>
      this.#connection(client, info.ip),
    );
    // Sockets are accepted here and handed to ssh2, so close() can end live sessions too.
    this.#net = createServer((socket) => {
      socket.setNoDelay(true);
      this.accept(socket);
    });
  }

  /** Serves one connection that came another way than the gateway's port (a node's: relayed by an API replica). */
  accept(socket: Socket | Duplex, remoteAddress?: string): void {
    this.#sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => this.#sockets.delete(socket));
    // ssh2 reports the peer as the socket's remoteAddress (what the login throttle counts by).
    if (remoteAddress !== undefined && !(socket instanceof Socket)) Object.defineProperty(socket, 'remoteAddress', { value: remoteAddress });
    this.#server.injectSocket(socket as Socket);
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#net.once('error', reject);
      this.#net.listen(port, host, () => {
        this.#net.off('error', reject);
        resolve((this.#net.address() as AddressInfo).port);
      });
    });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#net.close(() => resolve()));
    for (const s of this.#sockets) s.destroy();
    await closed;
  }

  #connection(client: Connection, ip: string): void {
    const { access, log } = this.#deps;
    let rec: SandboxRecord | undefined;
    const deadline = setTimeout(() => client.end(), LOGIN_DEADLINE_MS);
    deadline.unref();
    client.on('error', (err) => log.debug({ err: String(err), ip }, 'ssh connection error'));
    client.on('close', () => clearTimeout(deadline));
    client.on('authentication', (ctx) => {
      if (ctx.method === 'none') return ctx.reject(METHODS);
      if (ctx.method !== 'password' && ctx.method !== 'publickey') return ctx.reject(METHODS);
      if (ctx.method === 'publickey' && ctx.signature) {
        const key = utils.parseKey(ctx.key.data);
        if (key instanceof Error || Array.isArray(key) || !ctx.blob || !key.verify(ctx.blob, ctx.signature, ctx.hashAlgo)) return ctx.reject(METHODS);
      }
      const cred = ctx.method === 'password' ? { kind: 'password' as const, password: ctx.password } : { kind: 'key' as const, blob: ctx.key.data };
      access.authenticate(ctx.username, cred, ip).then(
        (found) => {
          if (!found) return ctx.reject(METHODS);
          if (ctx.method === 'publickey' && !ctx.signature) return ctx.accept(); // the key would do: the client signs next
          rec = found;
          ctx.accept();
        },
        () => ctx.reject(METHODS),
      );
    });
    client.on('ready', () => {
      clearTimeout(deadline);
      const sandbox = rec!;
      if (this.#deps.relay) return relayConnection(client, sandbox, this.#deps.relay, log);
      // A login resumes a paused sandbox, as a preview request does; what the session opens waits for it too.
      const live = access.activate(sandbox).catch((err) => {
        log.warn({ sandbox: sandbox.id, err: String(err) }, 'ssh login could not resume the sandbox');
        return sandbox;
      });
      client.on('session', (accept) => this.#session(accept(), live));
      client.on('tcpip', (accept, reject, info) => {
        void live
          .then((r) => access.tunnel(r, info.destPort))
          .then(
            (socket) => {
              const ch = accept();
              socket.pipe(ch).pipe(socket);
              const end = () => {
                socket.destroy();
                ch.destroy();
              };
              socket.once('error', end);
              socket.once('close', end);
              ch.once('error', end);
              ch.once('close', end);
            },
            () => reject(),
          );
      });
    });
  }

  #session(session: Session, live: Promise<SandboxRecord>): void {
    const { access, files } = this.#deps;
    const env: Record<string, string> = {};
    let pty: { cols: number; rows: number } | undefined;
    let proc: AgentProcess | undefined;
    session.on('env', (accept, reject, info) => {
      if (ACCEPTED_ENV.test(info.key)) {
        env[info.key] = info.val;
        accept?.();
      } else reject?.();
    });
    session.on('pty', (accept, _reject, info) => {
      pty = { cols: Math.max(1, Math.min(info.cols || 80, 1000)), rows: Math.max(1, Math.min(info.rows || 24, 1000)) };
      env.TERM = info.term || 'xterm-256color';
      accept?.();
    });
    session.on('window-change', (accept, _reject, info) => {
      if (pty && info.cols > 0 && info.rows > 0) proc?.resize(Math.min(info.cols, 1000), Math.min(info.rows, 1000));
      accept?.();
    });
    session.on('signal', (accept, _reject, info) => {
      const name = `SIG${info.name.replace(/^SIG/, '')}`;
      if (name in constants.signals) proc?.kill(name as NodeJS.Signals);
      accept?.();
    });
    const run = (argv: string[], channel: ServerChannel) => {
      live
        .then((r) => access.spawn(r, { argv, env, user: 'user', pty, stdin: true }))
        .then(
          (p) => {
            proc = p;
            this.#attach(p, channel, !!pty);
          },
          (err: Error) => {
            channel.stderr.write(`sandpit: ${err.message}\r\n`);
            channel.exit(255);
            channel.end();
          },
        );
    };
    session.on('shell', (accept) => run(['/bin/bash', '-l'], accept()));
    session.on('exec', (accept, _reject, info) => run(['/bin/bash', '-lc', info.command], accept()));
    session.on('sftp', (accept) => {
      const sftp = accept();
      // A client ends the subsystem with EOF and waits for the channel to close (scp's sftp mode hung here);
      // scp also takes a session without an exit status as failed.
      sftp.once('end', () => {
        sftpExit(sftp, 0);
        sftp.end();
      });
      serveSftp(sftp, files, live);
    });
    session.on('subsystem', (_accept, reject) => reject());
  }

  /** Wires an agent process to an SSH channel: output, input, exit status, and a hangup when the client goes. */
  #attach(proc: AgentProcess, channel: ServerChannel, tty: boolean): void {
    let exited = false;
    proc.on('stdout', (b: Buffer) => channel.write(b));
    proc.on('stderr', (b: Buffer) => channel.stderr.write(b));
    proc.once('exit', (info: ExitInfo) => {
      exited = true;
      if (info.signal !== null) channel.exit(SIGNAL_NAMES.get(info.signal) ?? 'KILL', false, '');
      else channel.exit(info.exitCode);
      channel.end();
    });
    proc.once('error', (err: Error & { code?: string }) => {
      if (exited) return;
      exited = true;
      channel.stderr.write(`sandpit: ${err.message}\r\n`);
      channel.exit(err.code === 'ENOENT' ? 127 : 255);
      channel.end();
    });
    channel.on('data', (b: Buffer) => proc.write(b));
    // On a terminal, end of input is the user's ^D, typed as a byte; without one it is EOF on stdin.
    channel.on('end', () => {
      if (!tty) proc.closeStdin();
    });
    channel.on('error', () => undefined);
    channel.once('close', () => {
      if (!exited) proc.kill('SIGHUP');
    });
  }
}

/** Whether ssh2 loaded its native ciphers: without them (no compiler at install, or built against another Node's headers) it falls back to JavaScript ones. */
function nativeCiphers(): boolean {
  return (createRequire(import.meta.url)('ssh2/lib/protocol/crypto.js') as { bindingAvailable: boolean }).bindingAvailable;
}
