/**
 * Issue 25 SSH benchmarks against a real server process with Debian's OpenSSH client: login to a
 * shell prompt (target: 300 ms median) next to a data-plane exec round trip, and a 1 GiB `scp` upload
 * next to the data plane's 1 GiB upload of the same file timed in the same run (target: scp at least
 * 70% of that rate). Prints medians and ratios; asserts nothing.
 * Run: node bench/ssh.bench.ts   (BENCH_RUNS, default 3 transfers and 10 logins x BENCH_RUNS/3;
 * BENCH_DRIVER=container|gvisor the engine; BENCH_CLUSTER=1 through an API replica's SSH relay to a node).
 * Client, server and sandbox share the host's CPUs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createDatabase, PostgresCluster } from '../packages/server/test/helpers/postgres.ts';
import { Api, freePort, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, ratio, report, timeIt } from './stats.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const LOGINS = Math.max(5, Math.round((10 * RUNS) / 3));
const SIZE = 1024 * 1024 * 1024;

const dir = await mkdtemp(join(tmpdir(), 'sandpit-ssh-bench-'));
const sshPort = await freePort();
const engine: Record<string, string> = process.env.BENCH_DRIVER ? { SANDPIT_DRIVER: process.env.BENCH_DRIVER } : {};
// BENCH_CLUSTER=1: an API replica and one node on PostgreSQL; logins and uploads go through the replica (its SSH relay).
const cluster = process.env.BENCH_CLUSTER === '1' ? await startCluster() : undefined;
const server = cluster?.api ?? (await ServerProcess.start({ SANDPIT_SSH_PORT: String(sshPort), SANDPIT_RATE_LIMIT: '0', ...engine }));
try {
  console.log(`driver: ${/driver: (\w+)/.exec((cluster?.node ?? server).output)?.[1] ?? 'unknown'}${cluster ? ', through an API replica to a node' : ''}`);
  const api = new Api(server.url, server.key);
  const key = join(dir, 'id_ed25519');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const added = await api.post('/ssh-keys', { public_key: (await readFile(`${key}.pub`, 'utf8')).trim() });
  if (added.status !== 201) throw new Error(`ssh key: ${added.status} ${JSON.stringify(added.body)}`);
  const sb = (await api.post('/sandboxes', {})).body;
  const opts = ['-i', key, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', `UserKnownHostsFile=${join(dir, 'known_hosts')}`, '-o', 'LogLevel=ERROR'];

  /** From starting `ssh` to the shell's prompt on its terminal. */
  const login = () =>
    new Promise<void>((resolve, reject) => {
      const child = spawn('ssh', [...opts, '-tt', '-p', String(sshPort), `${sb.id}@127.0.0.1`], { stdio: ['pipe', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d;
        if (/[$#] $/.test(out)) {
          child.stdin.end('exit\n');
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`ssh exited ${code} before a prompt: ${JSON.stringify(out)}`)));
    });
  const logins: number[] = [];
  const execs: number[] = [];
  await login();
  for (let i = 0; i < LOGINS; i++) {
    logins.push(await timeIt(login));
    execs.push(
      await timeIt(async () => {
        const r = await api.post(`/sandboxes/${sb.id}/exec`, { command: 'true' });
        if (r.status !== 200) throw new Error(`exec: ${r.status}`);
      }),
    );
  }
  report('ssh login -> prompt', logins, '300 ms');
  report('data-plane exec `true` (same run)', execs);

  const file = join(dir, 'bench.bin');
  const fh = await open(file, 'w');
  const block = randomBytes(1024 * 1024);
  for (let i = 0; i < SIZE / block.length; i++) await fh.write(block);
  await fh.close();
  const dp = { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.access_token };
  const scp: number[] = [];
  const put: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    put.push(
      await timeIt(async () => {
        const res = await fetch(`${server.url}/files?path=/home/user/put.bin`, {
          method: 'PUT',
          headers: { ...dp, 'content-type': 'application/octet-stream' },
          body: Readable.toWeb(createReadStream(file)) as ReadableStream,
          duplex: 'half',
        } as RequestInit);
        if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`);
      }),
    );
    scp.push(
      await timeIt(async () => {
        const r = spawnSync('scp', [...opts, '-P', String(sshPort), file, `${sb.id}@127.0.0.1:scp.bin`]);
        if (r.status !== 0) throw new Error(`scp: ${r.status} ${r.stderr}`);
      }),
    );
  }
  const mbps = (ms: number[]) => (SIZE / 1e6 / (median(ms) / 1000)).toFixed(0);
  report('1 GiB data-plane upload (PUT /files)', put);
  console.log(`  -> ${mbps(put)} MB/s`);
  report('1 GiB scp upload', scp);
  console.log(`  -> ${mbps(scp)} MB/s; scp rate is ${((median(put) / median(scp)) * 100).toFixed(0)}% of the data plane's (target >= 70%)`);
  ratio('scp time vs data-plane upload time', scp, put);
} catch (err) {
  // What the servers said is the only trace of a failure inside them.
  for (const [name, s] of [
    ['server', server],
    ['node', cluster?.node],
  ] as const)
    if (s) console.error(`--- ${name}'s output, last lines:\n${s.output.split('\n').slice(-30).join('\n')}`);
  throw err;
} finally {
  await server.stop();
  await cluster?.stop();
  await rm(dir, { recursive: true, force: true });
}

async function startCluster(): Promise<{ api: ServerProcess; node: ServerProcess; stop: () => Promise<void> }> {
  const pg = await PostgresCluster.start();
  const db = await createDatabase(pg.adminUrl);
  const shared = { SANDPIT_DATABASE_URL: db.url, SANDPIT_CLUSTER_KEY: randomBytes(32).toString('hex'), SANDPIT_RATE_LIMIT: '0' };
  const api = await ServerProcess.start({ ...shared, SANDPIT_ROLE: 'api', SANDPIT_SSH_PORT: String(sshPort) });
  const node = await ServerProcess.start({ ...shared, ...engine, SANDPIT_ROLE: 'node', SANDPIT_NODE_ID: 'n1', SANDPIT_API_URL: api.url, SANDPIT_PUBLIC_URL: api.url });
  // The node takes sandboxes once its first heartbeat is in.
  const client = new Api(api.url, api.key);
  for (let i = 0; ; i++) {
    const res = await client.post('/sandboxes', {});
    if (res.status === 201) {
      await client.del(`/sandboxes/${res.body.id}`);
      break;
    }
    if (i > 120) throw new Error(`the node never took a sandbox: ${res.status} ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    api,
    node,
    stop: async () => {
      await node.stop();
      await db.drop();
      await pg.stop();
    },
  };
}
