/**
 * Issue 11 item 9: what the principal cache saves per request, what keeps it fresh costs, and how
 * late another replica learns a revocation. On SQLite and on PostgreSQL (a throwaway cluster), through
 * the AuthService itself: a request's key lookup from the store (the key row joined to its user, then
 * the user's roles; what every request did before) next to a cache hit; one read of the auth epoch
 * (each process reads it every 200 ms); and, with two store handles on one PostgreSQL database standing
 * for two replicas, the time from a key revoked through one until the other refuses it.
 *
 *   node bench/auth-cache.bench.ts     (BENCH_LOOKUPS per case, default 2000; BENCH_REVOKES, default 20)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../packages/server/src/clock.ts';
import { AuthService } from '../packages/server/src/services/access/auth.ts';
import { readAuthEpoch } from '../packages/server/src/store/auth-epoch.ts';
import { type Db, openDb } from '../packages/server/src/store/db.ts';
import { TeamStore } from '../packages/server/src/store/teams.ts';
import { createDatabase, PostgresCluster } from '../packages/server/test/helpers/postgres.ts';
import { median, percentile, ratio } from './stats.ts';

const LOOKUPS = Number(process.env.BENCH_LOOKUPS ?? 2000);
const REVOKES = Number(process.env.BENCH_REVOKES ?? 20);
/** What server.ts runs: the epoch read every 200 ms. */
const SYNC_MS = 200;

/** In microseconds: a cache hit is far below the 0.01 ms `report` shows. */
const us = (name: string, xs: number[]) =>
  console.log(`${name.padEnd(44)} median ${(median(xs) * 1000).toFixed(1).padStart(8)} us   p90 ${(percentile(xs, 90) * 1000).toFixed(1).padStart(8)} us   n=${xs.length}`);

async function perCall(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

/** Runs `fn` with `auth` keeping its cache fresh, as a server process does. */
async function synced<T>(auth: AuthService, fn: () => Promise<T>): Promise<T> {
  await auth.syncChanges();
  const timer = setInterval(() => void auth.syncChanges(), SYNC_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

async function lookups(name: string, db: Db): Promise<void> {
  const key = (await new AuthService(new TeamStore(db), systemClock).createTeam(`bench-${Date.now()}`)).key;
  const uncached = new AuthService(new TeamStore(db), systemClock);
  const cached = new AuthService(new TeamStore(db), systemClock);
  // Emptied before every call: each reads the store.
  const fromStore = () => {
    uncached.changed();
    return uncached.authenticate(key);
  };
  await synced(uncached, () => perCall(200, fromStore));
  const store = await synced(uncached, () => perCall(LOOKUPS, fromStore));
  const hit = await synced(cached, () => perCall(LOOKUPS, () => cached.authenticate(key)));
  const epoch = await perCall(LOOKUPS, () => readAuthEpoch(db));
  console.log(`\n== ${name}`);
  us('key lookup from the store (before)', store);
  us('key lookup, cache hit (after)', hit);
  ratio('cache hit', hit, store);
  us(`auth epoch read (one per ${SYNC_MS} ms)`, epoch);
}

async function propagation(url: string): Promise<void> {
  const [a, b] = [await openDb({ dataDir: tmpdir(), databaseUrl: url }), await openDb({ dataDir: tmpdir(), databaseUrl: url })];
  try {
    const authA = new AuthService(new TeamStore(a), systemClock);
    const authB = new AuthService(new TeamStore(b), systemClock);
    const owner = await authA.createTeam(`bench-revoke-${Date.now()}`);
    const p = await authA.authenticate(owner.key);
    const late: number[] = [];
    await synced(authA, () =>
      synced(authB, async () => {
        for (let i = 0; i < REVOKES; i++) {
          const made = await authA.createKey(p, `revoked-${i}`, ['sandboxes:read']);
          await authB.authenticate(made.key);
          const t = performance.now();
          await authA.revokeKey(p.teamId, made.record.id);
          // Polled every millisecond: how long replica B still accepts the key.
          while (
            await authB.authenticate(made.key).then(
              () => true,
              () => false,
            )
          )
            await new Promise((r) => setTimeout(r, 1));
          late.push(performance.now() - t);
          await new Promise((r) => setTimeout(r, Math.random() * SYNC_MS));
        }
      }),
    );
    console.log(`\n== PostgreSQL, two handles: a key revoked through A, refused by B after`);
    console.log(`median ${median(late).toFixed(0)} ms   p99 ${percentile(late, 99).toFixed(0)} ms   max ${Math.max(...late).toFixed(0)} ms   n=${late.length} (bound: 500 ms)`);
  } finally {
    await a.destroy();
    await b.destroy();
  }
}

const dir = await mkdtemp(join(tmpdir(), 'sandpit-auth-bench-'));
const sqlite = await openDb({ dataDir: dir });
try {
  await lookups('SQLite', sqlite);
} finally {
  await sqlite.destroy();
  await rm(dir, { recursive: true, force: true });
}
const cluster = await PostgresCluster.start();
try {
  const database = await createDatabase(cluster.adminUrl);
  const pg = await openDb({ dataDir: cluster.dir, databaseUrl: database.url });
  try {
    await lookups('PostgreSQL', pg);
  } finally {
    await pg.destroy();
  }
  await propagation(database.url);
  await database.drop();
} finally {
  await cluster.stop();
}
