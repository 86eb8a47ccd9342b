import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { underReaper } from '../../src/runtime/host/reaper.ts';
import { teardownEngine } from '../../src/teardown.ts';
import { testDatabase } from './postgres.ts';

export const CLI = new URL('../../../cli/src/main.ts', import.meta.url).pathname;
/**
 * Settings of every test platform: they run side by side, so no E2B or SSH port of their own and two spare
 * namespaces (not the default's 32) instead of a burst's worth; and no pre-started sandboxes, since tests count
 * sandboxes and engine calls. A test that wants one of these asks for it.
 */
export const SIDE_BY_SIDE = { SANDPIT_E2B_PORT: '0', SANDPIT_SSH_PORT: '0', SANDPIT_NET_WARM: '2', SANDPIT_WARM_POOL: '0' } as const;

export const IMAGE_DIR = process.env.SANDPIT_IMAGE_DIR || '/var/lib/sandpit/images';

/** Where a port handed out for a test server is chosen: below the kernel's range for outgoing connections. */
const TEST_PORTS_FROM = 10_000;

/**
 * A port free now, for a server a test starts next. Chosen below the kernel's ephemeral range: a port
 * from that range (what binding port 0 gives) can be taken by any outgoing connection before the server
 * binds it, which failed a CI run (an E2B port taken between here and the server's start).
 */
export async function freePort(): Promise<number> {
  const ephemeralFrom = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  const span = Math.max(1, ephemeralFrom - TEST_PORTS_FROM);
  for (let tries = 0; ; tries++) {
    const port = TEST_PORTS_FROM + Math.floor(Math.random() * span);
    if (await bindable(port)) return port;
    if (tries === 100) throw new Error(`no free port between ${TEST_PORTS_FROM} and ${ephemeralFrom} after 100 tries`);
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A real Sandpit server in its own process, on its own data directory. */
export class ServerProcess {
  readonly dataDir: string;
  readonly key: string;
  port: number;
  readonly env: Record<string, string>;
  child: ChildProcess | undefined;
  output = '';
  /** The CLI `launch` starts: another checkout's, for a benchmark that compares two versions on one data dir. */
  cli = CLI;
  dropDatabase: (() => Promise<void>) | undefined;
  /** What the server prints once it serves: an API replica (SANDPIT_ROLE=api) builds no template. */
  readonly ready: string;

  private constructor(dataDir: string, port: number, env: Record<string, string>) {
    this.ready = env.SANDPIT_ROLE === 'api' ? 'Sandpit is up at' : 'platform/base ready';
    this.dataDir = dataDir;
    this.port = port;
    this.key = `sp_test_${randomBytes(12).toString('hex')}`;
    this.env = env;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The server's own process (`child` is the reaper it runs under, as `sandpit up` starts it); undefined once it exited. */
  get pid(): number | undefined {
    const reaper = this.child?.pid;
    if (reaper === undefined) return undefined;
    try {
      const first = readFileSync(`/proc/${reaper}/task/${reaper}/children`, 'utf8').trim().split(' ')[0];
      return first ? Number(first) : undefined;
    } catch {
      return undefined;
    }
  }

  /** `dataDir`: a directory to create and use (a test's own filesystem); default a fresh temp dir. */
  static async start(env: Record<string, string> = {}, opts: { dataDir?: string } = {}): Promise<ServerProcess> {
    const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'sandpit-test-')));
    if (opts.dataDir) await mkdir(dataDir, { recursive: true });
    const database = await testDatabase();
    const s = new ServerProcess(dataDir, await freePort(), database ? { SANDPIT_DATABASE_URL: database.url, ...env } : env);
    s.dropDatabase = database?.drop;
    // A free port can be taken between freePort() and the server's bind (parallel starts, outgoing connections): try another.
    for (let attempt = 1; ; attempt++) {
      try {
        await s.launch();
        return s;
      } catch (err) {
        if (attempt === 5 || !/\(PORT\) is already in use/.test(s.output)) {
          // Nothing of a start that failed outlives it: its process, engine state and data dir.
          await s.kill9();
          await s.stop().catch(() => undefined);
          throw err;
        }
        s.port = await freePort();
      }
    }
  }

  /**
   * Starts servers side by side. If one fails, the others are stopped before the error is thrown:
   * a server left running keeps the test file's process alive, and the run never ends.
   */
  static async startAll(envs: Record<string, string>[]): Promise<ServerProcess[]> {
    const started = await Promise.allSettled(envs.map((env) => ServerProcess.start(env)));
    const failed = started.find((r) => r.status === 'rejected');
    if (!failed) return started.map((r) => (r as PromiseFulfilledResult<ServerProcess>).value);
    for (const r of started) if (r.status === 'fulfilled') await r.value.stop().catch(() => undefined);
    throw failed.reason;
  }

  async launch(): Promise<void> {
    this.output = '';
    const { file, args } = underReaper(process.execPath, [this.cli, 'serve']);
    const child = spawn(file, args, {
      env: {
        ...process.env,
        PORT: String(this.port),
        HOST: '127.0.0.1',
        SANDPIT_DATA_DIR: this.dataDir,
        SANDPIT_IMAGE_DIR: IMAGE_DIR,
        SANDPIT_BOOTSTRAP_API_KEY: this.key,
        SANDPIT_LOG_LEVEL: 'warn',
        ...SIDE_BY_SIDE,
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout?.on('data', (d) => (this.output += d));
    child.stderr?.on('data', (d) => (this.output += d));
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${this.output}`);
      if (this.output.includes(this.ready)) return;
      if (this.output.includes('could not be built')) throw new Error(`base template failed:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`server did not become ready:\n${this.output}`);
  }

  /** Simulates a crash: SIGKILL, no shutdown path runs. */
  async kill9(): Promise<void> {
    await this.#signal('SIGKILL');
  }

  async #signal(sig: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    // The reaper passes other signals on and exits with the server; SIGKILL goes to the server itself, so it is surely gone when the reaper is.
    const server = sig === 'SIGKILL' ? this.pid : undefined;
    if (server !== undefined) process.kill(server, sig);
    else child.kill(sig);
    await exited;
    // A stop that overran its deadline exits anyway; the step it hung on is worth seeing in the test output.
    const overran = /sandpit: the stop did not finish.*/.exec(this.output);
    if (overran) console.error(`${this.dataDir}: ${overran[0]}`);
  }

  /** Deletes every sandbox through the API, stops the server, and removes the data directory. */
  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      const api = new Api(this.url, this.key);
      // A node with internal TLS does not answer plain HTTP: the teardown below takes what it holds.
      for (;;) {
        const res = await api.get('/sandboxes?limit=1000').catch(() => undefined);
        const list = (res?.body as { sandboxes?: { id: string }[] } | undefined)?.sandboxes ?? [];
        let deleted = 0;
        for (const sb of list) if ((await api.del(`/sandboxes/${sb.id}`)).status === 204) deleted++;
        // What cannot be deleted through the API (its node is gone) is left to the teardown below.
        if (deleted === 0) break;
      }
      await this.#signal('SIGTERM');
    }
    // Whatever the server left (a crashed run, a failed delete) is destroyed here, and the layer store unmounted.
    await teardownEngine(loadConfig({ SANDPIT_DATA_DIR: this.dataDir, SANDPIT_IMAGE_DIR: IMAGE_DIR, ...this.env }));
    await rm(this.dataDir, { recursive: true, force: true });
    await this.dropDatabase?.();
  }
}

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small real HTTP client for tests. */
export class Api {
  readonly base: string;
  readonly key: string | undefined;
  constructor(base: string, key?: string) {
    this.base = base;
    this.key = key;
  }

  async req<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res<T>> {
    const h: Record<string, string> = { ...headers };
    if (this.key !== undefined && !('x-api-key' in h)) h['x-api-key'] = this.key;
    let payload: string | undefined;
    if (body !== undefined) {
      h['content-type'] ??= 'application/json';
      payload = typeof body === 'string' ? body : JSON.stringify(body);
    }
    const res = await fetch(this.base + path, { method, headers: h, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('application/json')) parsed = text ? JSON.parse(text) : undefined;
    return { status: res.status, headers: res.headers, body: parsed as T };
  }
  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.req<T>('GET', path, undefined, headers);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.req<T>('POST', path, body, headers);
  }
  patch<T = any>(path: string, body?: unknown) {
    return this.req<T>('PATCH', path, body);
  }
  del<T = any>(path: string) {
    return this.req<T>('DELETE', path);
  }
}

/** Parses a text/event-stream body into its data events and comment lines. */
export function parseSse(text: string): { events: any[]; comments: string[]; stray: string[] } {
  const events: any[] = [];
  const comments: string[] = [];
  const stray: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)));
    else if (line.startsWith(':')) comments.push(line);
    else if (line !== '') stray.push(line);
  }
  return { events, comments, stray };
}

/** One server and one sandbox for a whole test file, with its data-plane headers; cleaned up after. */
export function sandboxFixture(env: Record<string, string> = {}) {
  const fx = { server: undefined as unknown as ServerProcess, sb: undefined as any, dp: {} as Record<string, string> };
  before(async () => {
    fx.server = await ServerProcess.start(env);
    const res = await new Api(fx.server.url, fx.server.key).post('/sandboxes', {});
    if (res.status !== 201) throw new Error(`create failed: ${JSON.stringify(res.body)}`);
    fx.sb = res.body;
    fx.dp = { 'x-platform-sandbox-id': fx.sb.id, 'x-access-token': fx.sb.access_token };
  });
  after(async () => {
    await fx.server?.stop();
  });
  return fx;
}
