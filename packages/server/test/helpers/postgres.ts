import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';
/** Tests run against the cluster this names (set by the PostgreSQL pass of the suite); unset means SQLite. */
export const TEST_POSTGRES_ENV = 'SANDPIT_TEST_POSTGRES';

/** The unprivileged account the throwaway cluster runs as (PostgreSQL refuses to run as root). */
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

/**
 * A PostgreSQL 15 cluster of its own in a temp directory, reached only over a unix socket in
 * that directory, run by an unprivileged account; `stop` shuts it down and removes it all.
 */
export class PostgresCluster {
  readonly dir: string;
  readonly #user: string;

  private constructor(dir: string, user: string) {
    this.dir = dir;
    this.#user = user;
  }

  /** Superuser URL of the cluster's default database (the socket directory in `host` overrides the placeholder host name). */
  /** Durability settings are off: a test cluster never outlives its test run. */
  get #opts(): string {
    return `-c listen_addresses='' -c unix_socket_directories='${this.dir}' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  }

  get adminUrl(): string {
    return `postgres://sandpit@localhost/postgres?host=${encodeURIComponent(this.dir)}`;
  }

  static async start(): Promise<PostgresCluster> {
    const user = await clusterUser();
    const dir = await mkdtemp(join(tmpdir(), 'sandpit-pg-'));
    await chown(dir, user.uid, user.gid);
    const c = new PostgresCluster(dir, user.name);
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

  async #as(cmd: string, args: string[]): Promise<void> {
    const asUser = userInfo().uid === 0 ? (['runuser', ['-u', this.#user, '--', cmd, ...args]] as const) : ([cmd, args] as const);
    await run(asUser[0], [...asUser[1]], { cwd: this.dir });
  }

  /** Stops the server, keeping its data (a restart is `halt` then `resume`). */
  async halt(): Promise<void> {
    await this.#as(`${BIN}/pg_ctl`, ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  async resume(): Promise<void> {
    await this.#as(`${BIN}/pg_ctl`, ['-D', join(this.dir, 'data'), '-l', join(this.dir, 'log'), '-o', this.#opts, '-w', 'start']);
  }

  async stop(): Promise<void> {
    await this.#as(`${BIN}/pg_ctl`, ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** A fresh, empty database on the cluster at `adminUrl`; `drop` removes it (closing what still holds it). */
export async function createDatabase(adminUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `sp_${randomBytes(6).toString('hex')}`;
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

/** A database for one test server when the suite runs against PostgreSQL, else undefined (SQLite). */
export async function testDatabase(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const admin = process.env[TEST_POSTGRES_ENV];
  return admin ? createDatabase(admin) : undefined;
}
