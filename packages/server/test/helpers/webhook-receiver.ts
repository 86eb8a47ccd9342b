import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  json: any;
  at: number;
}

/** How the receiver answers one request: a status (after a delay), never, or by closing the connection. */
export type Answer = { status: number; delayMs?: number; headers?: Record<string, string> } | 'hang' | 'close';

/** A webhook receiver on 127.0.0.1 that records what it is sent. */
export class Receiver {
  readonly received: Received[] = [];
  answer: (n: number) => Answer;
  readonly #server: Server;
  readonly #hanging = new Set<ServerResponse>();

  private constructor(answer: (n: number) => Answer) {
    this.answer = answer;
    this.#server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        this.received.push({ headers: req.headers, body, json, at: Date.now() });
        const a = this.answer(this.received.length);
        if (a === 'hang') return void this.#hanging.add(res);
        if (a === 'close') return void req.socket.destroy();
        setTimeout(() => res.writeHead(a.status, a.headers).end('ok'), a.delayMs ?? 0);
      });
    });
  }

  static async start(answer: (n: number) => Answer = () => ({ status: 200 }), port = 0): Promise<Receiver> {
    const r = new Receiver(answer);
    await new Promise<void>((resolve) => r.#server.listen(port, '127.0.0.1', resolve));
    return r;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  get hostPort(): string {
    return `127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const res of this.#hanging) res.socket?.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** Polls `check` until it returns a truthy value, or fails after `timeoutMs`. */
export async function until<T>(check: () => T | Promise<T>, timeoutMs = 15_000, what = 'condition'): Promise<Exclude<T, false | undefined | null | 0 | ''>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as Exclude<T, false | undefined | null | 0 | ''>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
