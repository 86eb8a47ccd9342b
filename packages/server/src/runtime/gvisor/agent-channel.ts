import { closeSync } from 'node:fs';
import { chmod, readdir, readlink, rm } from 'node:fs/promises';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentClient } from '../agent-client.ts';
import { runCaptured } from '../host/posix-spawn.ts';
import { socketName } from '../host/socket-path.ts';
import { libc } from '../host/libc.ts';

const SIOCGSKNS = 0x894c;
const ioctl = libc.func('int ioctl(int fd, unsigned long request, void *arg)');

/**
 * Host end of one sandbox's agent channel. In gVisor the agent dials out
 * (`--connect`, a host unix socket opened through --host-uds=open) because a
 * listening socket on a gofer mount is refused. The agent keeps one connection
 * and redials it after EOF; that one stays with the channel as its control
 * connection, through which the driver runs its own checks (an agent READ
 * is far cheaper than `runsc exec`; docs/host-timings.md) and asks the agent to DIAL
 * whenever `accept` has no connection to hand out. One spare is dialed as soon
 * as the agent is up, so the first command does not wait for it.
 *
 * A checkpoint fails, and this runsc build then kills the sandbox, while the
 * sandbox holds any host socket: `close` stops listening and waits until the
 * agent has closed its end of every connection.
 */
export class AgentChannel {
  readonly path: string;
  #server: net.Server | undefined;
  #idle: net.Socket[] = [];
  #waiters: ((s: net.Socket) => void)[] = [];
  #live = new Set<net.Socket>();
  #control: AgentClient | undefined;
  #claiming = false;
  /** DIALs asked for whose connection has not arrived yet. */
  #dialing = 0;
  /**
   * The namespace of the latest connection (an fd): `close` needs it when none is open any more, as
   * after the agent's connections ended while another was on its way through the gofer.
   */
  #netns: number | undefined;
  #opening: Promise<void> | undefined;

  constructor(path: string) {
    this.path = path;
  }

  get listening(): boolean {
    return this.#server !== undefined;
  }

  /** Listens for the agent; callers at the same time (a request, the reopening after a restart) share one listen. */
  open(): Promise<void> {
    if (this.#server) return Promise.resolve();
    this.#opening ??= this.#listen().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #listen(): Promise<void> {
    await rm(this.path, { force: true });
    const server = net.createServer({ allowHalfOpen: false }, (s) => this.#onConnection(s));
    const name = socketName(this.path);
    server.once('close', () => name.release());
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => {
        name.release();
        reject(err);
      });
      server.listen(name.name, () => {
        server.removeAllListeners('error');
        resolve();
      });
    });
    // Root in the sandbox only: the agent runs as root, commands run as `user`.
    await chmod(this.path, 0o600);
    this.#server = server;
  }

  /** The driver's own connection to the agent, once the agent has dialed in. */
  get control(): AgentClient | undefined {
    return this.#control;
  }

  /** The agent's next connection (a waiting one first). */
  accept(timeoutMs: number): Promise<net.Socket> {
    const idle = this.#idle.shift();
    if (idle) return Promise.resolve(idle);
    if (!this.#server) return Promise.reject(Object.assign(new Error('the agent channel is closed'), { code: 'ECONNREFUSED' }));
    if (this.#dialing <= this.#waiters.length) this.#dial();
    return new Promise((resolve, reject) => {
      const waiter = (s: net.Socket): void => {
        clearTimeout(timer);
        resolve(s);
      };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(Object.assign(new Error(`the sandbox agent did not connect within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Waits until the agent has connected (its control connection is up; a first spare for `accept` is on its way). */
  async ready(timeoutMs: number, alive: () => Promise<boolean>): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    let lastCheck = performance.now();
    while (!this.#control) {
      const now = performance.now();
      if (now > deadline) throw new Error(`the sandbox agent did not connect within ${timeoutMs} ms`);
      if (now - lastCheck > 50) {
        lastCheck = now;
        if (!(await alive())) throw new Error('the sandbox stopped before its agent connected');
      }
      await sleep(2);
    }
  }

  /**
   * Stops listening and closes every connection; resolves once the sandbox
   * (`sentryPid`) holds no end of any of them, false when it still does at the timeout.
   */
  async close(timeoutMs: number, sentryPid?: number): Promise<boolean> {
    // Learnt before our ends go: the namespace the connections live in.
    const latest = this.#netns;
    this.#netns = undefined;
    const live = sentryPid ? netnsOf([...this.#live]) : undefined;
    const netns = live ?? (sentryPid ? latest : undefined);
    if (latest !== undefined && latest !== netns) closeSync(latest);
    this.#server?.close();
    this.#server = undefined;
    await rm(this.path, { force: true });
    for (const s of this.#live) s.destroy();
    this.#idle = [];
    this.#control = undefined;
    this.#dialing = 0;
    if (!sentryPid) return true;
    try {
      // gVisor does not pass a half-close through, so the proof is on the host:
      // the sandbox's sockets whose peer (ours) is gone, counted until none is left.
      const deadline = performance.now() + timeoutMs;
      while ((await orphanedSockets(sentryPid, netns === undefined ? undefined : `/proc/${process.pid}/fd/${netns}`)) > 0) {
        if (performance.now() > deadline) return false;
        await sleep(5);
      }
      return true;
    } finally {
      if (netns !== undefined) closeSync(netns);
    }
  }

  #onConnection(s: net.Socket): void {
    this.#live.add(s);
    const ns = netnsOf([s]);
    if (ns !== undefined) {
      if (this.#netns !== undefined) closeSync(this.#netns);
      this.#netns = ns;
    }
    s.on('error', () => undefined);
    s.once('close', () => {
      this.#live.delete(s);
      this.#idle = this.#idle.filter((i) => i !== s);
    });
    if (!this.#control && !this.#claiming) {
      this.#claim(s);
      return;
    }
    if (this.#dialing > 0) this.#dialing--;
    const waiter = this.#waiters.shift();
    if (waiter) waiter(s);
    else this.#idle.push(s);
  }

  /** Makes `s` the control connection and asks at once for the connections `accept` will hand out. */
  #claim(s: net.Socket): void {
    this.#claiming = true;
    AgentClient.attach(s, { timeoutMs: 5000 }).then(
      (client) => {
        this.#claiming = false;
        if (s.destroyed) return;
        this.#control = client;
        // The agent redials after EOF: the next connection becomes the control one.
        client.once('close', () => this.#control === client && (this.#control = undefined));
        const want = Math.max(1, this.#waiters.length);
        while (this.#idle.length === 0 && this.#dialing < want) this.#dial();
      },
      () => {
        this.#claiming = false;
      },
    );
  }

  #dial(): void {
    const control = this.#control;
    if (!control) return;
    this.#dialing++;
    control.dial().catch(() => this.#dialing > 0 && this.#dialing--);
  }
}

/**
 * An fd of the network namespace the sockets were made in, or undefined. A
 * unix connection belongs to the namespace of the side that connected: for the
 * agent's, runsc's gofer (it dials host sockets for the sandbox) in a namespace
 * of its own, where the host's `ss` does not see them.
 */
function netnsOf(sockets: net.Socket[]): number | undefined {
  for (const s of sockets) {
    const fd = (s as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (fd === undefined || fd < 0) continue;
    const ns = ioctl(fd, SIOCGSKNS, null) as number;
    if (ns >= 0) return ns;
  }
  return undefined;
}

/**
 * Connected unix stream sockets whose peer is gone (the kernel then reports
 * peer 0): the sandbox's ends of host connections that we closed but it has
 * not yet. `netns`: the gofer's namespace, where every socket is the sandbox's,
 * so all count, including a connection the gofer has dialed and not yet handed
 * to the sentry (it is in no fd table of the sentry then, and a save that
 * finds it once it lands fails and ends the sandbox). Without it, our namespace,
 * and only the sockets in `pid`'s fd table (`ss -p` would walk every process's).
 */
export async function orphanedSockets(pid: number, netns?: string): Promise<number> {
  const held = netns === undefined ? await socketInodes(pid) : undefined;
  if (held?.size === 0) return 0;
  const ss = ['ss', '-x', '-a', '-n'];
  const { stdout } = netns === undefined ? await runCaptured(ss[0]!, ss.slice(1)) : await runCaptured('nsenter', [`--net=${netns}`, ...ss]);
  const alive = new Set<string>();
  const mine: string[] = [];
  for (const line of stdout.split('\n')) {
    // Netid State Recv-Q Send-Q <local path> <inode> <peer path> <peer inode>
    const f = line.trim().split(/\s+/);
    if (f[0] !== 'u_str' || f.length < 8) continue;
    alive.add(f[5]!);
    if (f[1] === 'ESTAB' && (held === undefined || held.has(f[5]!))) mine.push(f[7]!);
  }
  return mine.filter((peer) => peer === '0' || !alive.has(peer)).length;
}

async function socketInodes(pid: number): Promise<Set<string>> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  return new Set(links.map((l) => /^socket:\[(\d+)\]$/.exec(l)?.[1]).filter((ino) => ino !== undefined));
}
