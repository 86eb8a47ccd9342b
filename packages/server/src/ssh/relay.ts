import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import { finished } from 'node:stream';
import type { Logger } from 'pino';
import ssh2, { type ClientChannel, type Client as SshClient, type Connection, type PseudoTtyOptions, type ServerChannel, type Session } from 'ssh2';
import type { SandboxRecord } from '../store/sandboxes.ts';

// ssh2 is CommonJS: its named exports are read off the default export.
const { Client } = ssh2;

/** How long the node's gateway may take to answer the relay's login. */
const UPSTREAM_READY_MS = 30_000;
const KEEPALIVE_MS = 15_000;

/** Where an API replica's gateway relays a login: the SSH gateway of the node holding the sandbox. */
export interface SshRelayTarget {
  /** A byte stream to that node's gateway. */
  open(sandboxId: string): Promise<Duplex>;
  /** The nodes' host key (SSH wire format): a stream answered with another key reaches no node of this cluster. */
  hostKey: Buffer;
}

/**
 * Relays a logged-in client to the node holding its sandbox: the replica logs in there with the
 * sandbox's access token (the client's own credential was checked here) and passes every session
 * (shell, command, sftp, with its pty, env, window changes, signals and exit status) and every
 * `-L` tunnel through. The node's gateway does the rest, resuming a paused sandbox included.
 */
export function relayConnection(client: Connection, rec: SandboxRecord, target: SshRelayTarget, log: Logger): void {
  const upstream = loginUpstream(rec, target);
  upstream.then(
    (up) => {
      up.once('close', () => client.end());
      client.once('close', () => up.end());
    },
    (err: Error) => {
      log.warn({ sandbox: rec.id, err: err.message }, 'ssh relay could not reach the node holding the sandbox');
      client.end();
    },
  );
  client.on('session', (accept) => relaySession(accept(), upstream));
  client.on('tcpip', (accept, reject, info) => {
    upstream
      .then((up) => openChannel<ClientChannel>((cb) => up.forwardOut(info.srcIP, info.srcPort, info.destIP, info.destPort, cb)))
      .then(
        (up) => splice(accept(), up, false),
        () => reject(),
      );
  });
}

async function loginUpstream(rec: SandboxRecord, target: SshRelayTarget): Promise<SshClient> {
  const sock = await target.open(rec.id);
  const up = new Client();
  const ready = once(up, 'ready');
  // Errors after the login end the connection ('close' follows); before it they fail the login.
  up.on('error', () => undefined);
  up.connect({
    sock,
    username: rec.id,
    password: rec.accessToken,
    hostVerifier: (key: Buffer) => key.equals(target.hostKey),
    readyTimeout: UPSTREAM_READY_MS,
    keepaliveInterval: KEEPALIVE_MS,
  });
  await Promise.race([ready, once(up, 'close').then(() => Promise.reject(new Error('the node ended the login')))]);
  return up;
}

function openChannel<T>(open: (cb: (err: Error | undefined, ch: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => open((err, ch) => (err ? reject(err) : resolve(ch))));
}

/** One session: what the client asks before its shell, command or subsystem (pty, env) goes with it; what it asks after goes on. */
function relaySession(session: Session, upstream: Promise<SshClient>): void {
  const env: Record<string, string> = {};
  let pty: PseudoTtyOptions | undefined;
  let up: ClientChannel | undefined;
  session.on('env', (accept, _reject, info) => {
    env[info.key] = info.val;
    accept?.();
  });
  session.on('pty', (accept, _reject, info) => {
    pty = { rows: info.rows, cols: info.cols, width: info.width, height: info.height, term: info.term, modes: info.modes };
    accept?.();
  });
  session.on('window-change', (accept, _reject, info) => {
    up?.setWindow(info.rows, info.cols, info.height, info.width);
    accept?.();
  });
  session.on('signal', (accept, _reject, info) => {
    up?.signal(info.name);
    accept?.();
  });
  const start = (down: ServerChannel, open: (u: SshClient, cb: (err: Error | undefined, ch: ClientChannel) => void) => void) => {
    upstream
      .then((u) => openChannel<ClientChannel>((cb) => open(u, cb)))
      .then(
        (ch) => {
          up = ch;
          splice(down, ch, true);
        },
        (err: Error) => {
          down.stderr.write(`sandpit: ${err.message}\r\n`);
          down.exit(255);
          down.end();
        },
      );
  };
  session.on('shell', (accept) => start(accept(), (u, cb) => u.shell(pty ?? false, { env }, cb)));
  session.on('exec', (accept, _reject, info) => start(accept(), (u, cb) => u.exec(info.command, { env, ...(pty ? { pty } : {}) }, cb)));
  // No 'sftp' listener: the subsystem comes as a plain channel, relayed byte for byte.
  session.on('subsystem', (accept, reject, info) => {
    if (info.name !== 'sftp') return reject?.();
    start(accept(), (u, cb) => u.subsys('sftp', cb));
  });
}

/**
 * Joins the client's channel to the node's: bytes both ways with backpressure, the client's EOF passed
 * on, and once the node's channel has closed and all its output is written, its exit status, then the end.
 */
function splice(down: ServerChannel, up: ClientChannel, session: boolean): void {
  let exit: [number] | [string, boolean, string] | undefined;
  up.on('exit', (code: number | null, signal?: string, core?: boolean, desc?: string) => {
    exit = typeof code === 'number' ? [code] : [signal ?? 'KILL', core ?? false, desc ?? ''];
  });
  const drained = (s: NodeJS.ReadableStream) => new Promise<void>((r) => finished(s, { writable: false }, () => r()));
  const outputs = [drained(up), new Promise<void>((r) => up.once('close', () => r()))];
  up.pipe(down, { end: false });
  if (session) {
    up.stderr.pipe(down.stderr, { end: false });
    outputs.push(drained(up.stderr));
  }
  down.pipe(up);
  void Promise.all(outputs).then(() => {
    if (exit?.length === 1) down.exit(exit[0]);
    else if (exit) down.exit(exit[0], exit[1], exit[2]);
    down.end();
  });
  down.once('close', () => up.close());
  down.on('error', () => up.close());
  up.on('error', () => down.destroy());
}
