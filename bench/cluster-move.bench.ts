/**
 * Issue 12 item 5: what shipping a snapshot and moving a paused sandbox between nodes cost, next to
 * the raw copy (`tar -c | tar -x` of the same directories onto the other node's filesystems) timed in the same run.
 * - fork on the snapshot's holder vs a fork placed on the other node (the holder cordoned), which fetches it first;
 * - drain of a node holding one paused sandbox (its move) vs the raw copy of its image and layer;
 * - issue 27 item 1: a live move (POST /migrate) of the same sandbox running, and of an idle base
 *   sandbox (1 GiB of memory, 1 vCPU), while a probe runs `true` in it over the API: the downtime
 *   (the longest gap between two answers) next to pause + move + resume of the same sandbox.
 * The sandbox holds BENCH_MIB (default 64) MiB of files and as much in memory, so both parts have weight.
 * The members speak over mutual TLS, as `cluster up` makes them (BENCH_TLS=0: the plain signed channel).
 * Run: node bench/cluster-move.bench.ts   (BENCH_ROUNDS default 5)
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { InternalChannel } from '../packages/server/src/cluster/internal-channel.ts';
import { API_AUDIENCE, signInternalToken } from '../packages/server/src/internal-token.ts';
import { ClusterCerts, OPERATOR } from '../packages/server/src/local-cluster/cluster-certs.ts';
import { createDatabase, PostgresCluster } from '../packages/server/test/helpers/postgres.ts';
import { Api, freePort, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { ratio, report, timeIt } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MIB = Number(process.env.BENCH_MIB ?? 64);
const key = randomBytes(32);
const run = promisify(execFile);

async function until(f: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600 && !(await f()); i++) await new Promise((r) => setTimeout(r, 100));
}

/**
 * The raw copy: each directory through a tar pipe into a temporary one under the matching directory of
 * `into` (the other node's, so onto the same filesystems the move writes: the btrfs layer store, the data dir).
 */
async function rawCopy(dirs: string[], into: string[]): Promise<number> {
  const dests = await Promise.all(into.map((d) => mkdtemp(join(d, '.bench-raw-'))));
  try {
    return await timeIt(() => Promise.all(dirs.map((d, i) => run('sh', ['-c', `tar -C ${d} -c --xattrs --sparse . | tar -C ${dests[i]} -x --xattrs`]))));
  } finally {
    await Promise.all(dests.map((d) => rm(d, { recursive: true, force: true })));
  }
}

const TLS = process.env.BENCH_TLS !== '0';
const pg = await PostgresCluster.start();
const servers: ServerProcess[] = [];
const certDir = await mkdtemp(join(tmpdir(), 'sandpit-bench-tls-'));
try {
  const db = await createDatabase(pg.adminUrl);
  const env = { SANDPIT_CLUSTER_KEY: key.toString('hex'), SANDPIT_DRIVER: 'gvisor', SANDPIT_RATE_LIMIT: '0', SANDPIT_DATABASE_URL: db.url };
  const certs = new ClusterCerts(certDir);
  if (TLS) await certs.create([{ name: 'bapi', role: 'api' }, ...[1, 2].map((i) => ({ name: `b${i}`, role: 'node' as const }))]);
  const tlsEnv = (name: string): Record<string, string> => {
    if (!TLS) return {};
    const f = certs.files(name);
    return { SANDPIT_TLS_CA: f.ca, SANDPIT_TLS_CERT: f.cert, SANDPIT_TLS_KEY: f.key };
  };
  const internalPort = await freePort();
  const apiProc = await ServerProcess.start({ ...env, SANDPIT_ROLE: 'api', ...tlsEnv('bapi'), ...(TLS ? { SANDPIT_INTERNAL_PORT: String(internalPort) } : {}) });
  servers.push(apiProc);
  const internalUrl = TLS ? `https://127.0.0.1:${internalPort}` : apiProc.url;
  const operator = TLS ? await InternalChannel.tls(certs.files(OPERATOR)) : InternalChannel.plain();
  const nodes = new Map<string, ServerProcess>();
  for (const i of [1, 2]) {
    const n = await ServerProcess.start({
      ...env,
      SANDPIT_ROLE: 'node',
      SANDPIT_LOG_LEVEL: 'info',
      SANDPIT_NODE_ID: `b${i}`,
      SANDPIT_API_URL: internalUrl,
      ...tlsEnv(`b${i}`),
      SANDPIT_NET_POOL: `100.${120 + i}.0.0/16`,
      SANDPIT_PUBLIC_URL: apiProc.url,
    });
    servers.push(n);
    nodes.set(`b${i}`, n);
  }
  const api = new Api(apiProc.url, apiProc.key);
  const internal = async (path: string, method = 'GET') => {
    const res = await operator.fetch(`${internalUrl}${path}`, { method, headers: { authorization: `Bearer ${signInternalToken(key, API_AUDIENCE, 60_000)}` } });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? undefined : ((await res.json()) as any);
  };
  const counts = async () => new Map<string, number>(((await internal('/internal/nodes')).nodes as any[]).map((n) => [n.id, n.sandboxes]));
  const setState = async (action: string, id: string) => {
    await internal(`/internal/nodes/${id}/${action}`, 'POST');
    await new Promise((r) => setTimeout(r, 300));
  };
  await until(async () => ((await internal('/internal/nodes')).nodes as any[]).filter((n) => n.state === 'ready').length === 2);

  const sb = await api.post('/sandboxes', {});
  if (sb.status !== 201) throw new Error(JSON.stringify(sb.body));
  const id: string = sb.body.id;
  const bare = id.replace(/^sb-[^-]+-/, '');
  let holder = [...(await counts())].find(([, n]) => n > 0)![0];
  const other = (n: string) => [...nodes.keys()].find((x) => x !== n)!;
  const setup = await api.post(`/sandboxes/${id}/exec`, {
    command: `head -c ${MIB}M /dev/urandom > /home/user/blob && (python3 -c "import os,time; b=os.urandom(${MIB}<<20); time.sleep(1e9)" || (x=$(head -c ${MIB}M /dev/urandom | base64); sleep 1000000)) >/dev/null 2>&1 &`,
  });
  if (setup.status !== 200) throw new Error(JSON.stringify(setup.body));
  await new Promise((r) => setTimeout(r, 3000));

  /** A live move while a probe execs `true` in the sandbox: the call's time and the longest gap between two answers. */
  const liveMove = async (sid: string): Promise<{ total: number; gap: number }> => {
    const answers: number[] = [];
    let moving = true;
    const probe = (async () => {
      while (moving) {
        const r = await api.post(`/sandboxes/${sid}/exec`, { command: 'true' }).catch(() => undefined);
        if (r?.status === 200) answers.push(performance.now());
        else await new Promise((res) => setTimeout(res, 5));
      }
    })();
    await new Promise((res) => setTimeout(res, 300));
    const total = await timeIt(async () => {
      const m = await api.post(`/sandboxes/${sid}/migrate`, {});
      if (m.status !== 200) throw new Error(`migrate: ${JSON.stringify(m.body)}`);
    });
    // Until the probe has an answer from the new node.
    const after = answers.length;
    await until(async () => answers.length > after + 1);
    moving = false;
    await probe;
    return { total, gap: Math.max(...answers.slice(1).map((t, i) => t - answers[i]!)) };
  };

  const onHolder: number[] = [];
  const shipped: number[] = [];
  const rawSnap: number[] = [];
  const moved: number[] = [];
  const rawMove: number[] = [];
  const pauses: number[] = [];
  const resumes: number[] = [];
  const live: number[] = [];
  const liveGap: number[] = [];
  const idleLive: number[] = [];
  const idleGap: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const snap = await api.post(`/sandboxes/${id}/snapshot`, {});
    await until(async () => (await api.get(`/snapshots/${snap.body.id}`)).body.status === 'ready');
    const forkTime = async (into: number[]) => {
      let fid = '';
      into.push(
        await timeIt(async () => {
          const f = await api.post('/sandboxes', { from_snapshot: snap.body.id });
          if (f.status !== 201) throw new Error(JSON.stringify(f.body));
          fid = f.body.id;
        }),
      );
      await api.del(`/sandboxes/${fid}`);
    };
    await forkTime(onHolder);
    const g = join(nodes.get(holder)!.dataDir, 'gvisor');
    const og = join(nodes.get(other(holder))!.dataDir, 'gvisor');
    await mkdir(join(og, 'snapshot-images'), { recursive: true });
    rawSnap.push(await rawCopy([join(g, 'layers', '.snapshots', snap.body.id), join(g, 'snapshot-images', snap.body.id)], [join(og, 'layers'), join(og, 'snapshot-images')]));
    await setState('cordon', holder);
    await forkTime(shipped);
    await setState('uncordon', holder);
    await api.del(`/snapshots/${snap.body.id}`);

    if ((await api.post(`/sandboxes/${id}/pause`)).status !== 200) throw new Error('pause failed');
    await mkdir(join(og, 'checkpoints'), { recursive: true });
    rawMove.push(await rawCopy([join(g, 'checkpoints', bare, 'image'), join(g, 'layers', bare)], [join(og, 'checkpoints'), join(og, 'layers')]));
    moved.push(
      await timeIt(async () => {
        const a = await internal(`/internal/nodes/${holder}/drain`, 'POST');
        if (a.moved.length !== 1) throw new Error(JSON.stringify(a));
      }),
    );
    await setState('uncordon', holder);
    holder = other(holder);
    const resumed = await api.post(`/sandboxes/${id}/resume`);
    if (resumed.status !== 200) throw new Error(`resume after the move failed: ${JSON.stringify(resumed.body)}`);
    // The same sandbox paused and resumed in place, then moved running to the other node.
    pauses.push(await timeIt(() => api.post(`/sandboxes/${id}/pause`)));
    resumes.push(await timeIt(() => api.post(`/sandboxes/${id}/resume`)));
    const m = await liveMove(id);
    live.push(m.total);
    liveGap.push(m.gap);
    holder = other(holder);
  }
  // An idle base sandbox, moved back and forth once a drain cannot pick it up with the other.
  const idle = await api.post('/sandboxes', {});
  if (idle.status !== 201) throw new Error(JSON.stringify(idle.body));
  for (let r = 0; r < ROUNDS; r++) {
    const i = await liveMove(idle.body.id);
    idleLive.push(i.total);
    idleGap.push(i.gap);
  }
  const size = (await run('du', ['-sm', join(nodes.get(holder)!.dataDir, 'gvisor', 'layers', bare)])).stdout.split('\t')[0];
  console.log(`sandbox with ${MIB} MiB of files (layer now ${size} MiB) and ${MIB} MiB of memory; ${ROUNDS} rounds; internal channel ${TLS ? 'over mutual TLS' : 'plain (signed only)'}`);
  operator.close();
  report('fork on the snapshot holder', onHolder);
  report('fork on another node (ships the snapshot)', shipped);
  report('raw tar pipe of the snapshot', rawSnap);
  ratio(
    'shipping added vs raw tar',
    shipped.map((s, i) => s - onHolder[i]!),
    rawSnap,
  );
  report('drain moving one paused sandbox', moved);
  report('raw tar pipe of its image and layer', rawMove);
  ratio('move vs raw tar', moved, rawMove);
  report('pause of the same sandbox', pauses);
  report('resume of the same sandbox', resumes);
  const parts = pauses.map((p, k) => p + moved[k]! + resumes[k]!);
  report('pause + move + resume', parts);
  report('live move (POST /migrate), whole call', live);
  report('live move: longest gap between answers', liveGap);
  ratio('live move downtime vs pause + move + resume', liveGap, parts);
  report('idle 1 GiB sandbox: live move, whole call', idleLive);
  report('idle 1 GiB sandbox: longest gap', idleGap, '1500 ms');
  // What the nodes logged of each copy (bytes and ms inside the node).
  for (const n of nodes.values()) for (const line of n.output.split('\n')) if (/snapshot shipped here|sandbox moved to another node|sandbox copied here/.test(line)) console.log(line.slice(0, 300));
  await api.del(`/sandboxes/${id}`);
  await api.del(`/sandboxes/${idle.body.id}`);
} finally {
  for (const s of servers) await s.stop().catch(() => undefined);
  await pg.stop();
  await rm(certDir, { recursive: true, force: true });
}
