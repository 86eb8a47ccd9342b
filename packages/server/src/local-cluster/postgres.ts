import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';

/** The unprivileged account the cluster runs as (PostgreSQL refuses to run as root). */
async function clusterUser(): Promise<{ name: string; uid: number; gid: number }> {
  for (const name of ['postgres', 'nobody']) {
    try {
      const { stdout } = await run('id', ['-u', name]);
      const { stdout: g } = await run('id', ['-g', name]);
      return { name, uid: Number(stdout.trim()), gid: Number(g.trim()) };
    } catch {
      // try the next account
    }
  }
  throw new Error('no unprivileged account (postgres or nobody) to run PostgreSQL as');
}

export interface PostgresOptions {
  /** The cluster's directory (created if absent); unset: a new temp directory. */
  dir?: string;
  /** fsync and synchronous commit; off by default for a throwaway cluster, on for one in a chosen directory. */
  durable?: boolean;
}

/**
 * A PostgreSQL 15 cluster of its own in one directory, reached only over a unix socket in that
 * directory, run by an unprivileged account. `stop` shuts it down and removes the directory; `halt`
 * and `resume` restart it keeping its data.
 */
export class PostgresCluster {
  readonly dir: string;
  readonly #user: string;
  readonly #durable: boolean;

  private constructor(dir: string, user: string, durable: boolean) {
    this.dir = dir;
    this.#user = user;
    this.#durable = durable;
  }

  /** Superuser URL of the cluster's default database (the socket directory in `host` overrides the placeholder host name). */
  get adminUrl(): string {
    return `postgres://sandpit@localhost/postgres?host=${encodeURIComponent(this.socketDir)}`;
  }

  /**
   * Where the server's socket is: the cluster's directory, or, when that is too long for a unix
   * socket path (108 bytes), a short directory in /tmp named after it.
   */
  get socketDir(): string {
    if (Buffer.byteLength(join(this.dir, '.s.PGSQL.5432')) <= 107) return this.dir;
    return join(tmpdir(), `sandpit-pg-${createHash('sha256').update(this.dir).digest('hex').slice(0, 16)}`);
  }

  get #opts(): string {
    const fast = this.#durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off';
    return `-c listen_addresses='' -c unix_socket_directories='${this.socketDir}' -c max_connections=200${fast}`;
  }

  /** Creates the cluster (initdb) and starts it. */
  static async start(opts: PostgresOptions = {}): Promise<PostgresCluster> {
    const user = await clusterUser();
    const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'sandpit-pg-')));
    if (existsSync(join(dir, 'data'))) throw new Error(`${dir} already holds a PostgreSQL cluster`);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chown(dir, user.uid, user.gid);
    const c = new PostgresCluster(dir, user.name, opts.durable ?? opts.dir !== undefined);
    try {
      // Trust is safe here: the only way in is the socket in a directory only its owner (and root) may enter.
      await c.#as(`${BIN}/initdb`, ['-D', join(dir, 'data'), '-U', 'sandpit', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
      await c.resume();
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    return c;
  }

  /** The cluster an earlier `start` made in `dir` (running or not), to stop or restart it from another process. */
  static async open(dir: string, opts: { durable?: boolean } = {}): Promise<PostgresCluster> {
    return new PostgresCluster(dir, (await clusterUser()).name, opts.durable ?? true);
  }

  async #as(cmd: string, args: string[]): Promise<void> {
    const asUser = userInfo().uid === 0 ? (['runuser', ['-u', this.#user, '--', cmd, ...args]] as const) : ([cmd, args] as const);
    await run(asUser[0], [...asUser[1]], { cwd: this.dir });
  }

  /** Stops the server, keeping its data (a restart is `halt` then `resume`). */
  async halt(): Promise<void> {
    await this.#as(`${BIN}/pg_ctl`, ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  async resume(): Promise<void> {
    if (this.socketDir !== this.dir) {
      const user = await clusterUser();
      await mkdir(this.socketDir, { recursive: true, mode: 0o700 });
      await chown(this.socketDir, user.uid, user.gid);
    }
    await this.#as(`${BIN}/pg_ctl`, ['-D', join(this.dir, 'data'), '-l', join(this.dir, 'log'), '-o', this.#opts, '-w', 'start']);
  }

  /** Whether the server of this directory runs. */
  async running(): Promise<boolean> {
    return this.#as(`${BIN}/pg_ctl`, ['-D', join(this.dir, 'data'), 'status']).then(
      () => true,
      () => false,
    );
  }

  /** Stops the server (immediately: nothing is kept) and removes the directory. */
  async stop(): Promise<void> {
    await this.#as(`${BIN}/pg_ctl`, ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
    if (this.socketDir !== this.dir) await rm(this.socketDir, { recursive: true, force: true });
  }
}

/** A fresh, empty database on the cluster at `adminUrl`; `drop` removes it (closing what still holds it). */
export async function createDatabase(adminUrl: string, name = `sp_${randomBytes(6).toString('hex')}`): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function adminQuery(adminUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
