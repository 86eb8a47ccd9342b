import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { Api, CLI, IMAGE_DIR } from '../../server/test/helpers/server-process.ts';

const run = promisify(execFile);

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // The container engine: this test is about the cluster's processes, not an engine.
  const env = { ...process.env, SANDPIT_DRIVER: 'container', SANDPIT_IMAGE_DIR: IMAGE_DIR, SANDPIT_LOG_LEVEL: 'info' };
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The kernel-object name of a data directory (network/network-config.ts). */
async function installation(dataDir: string): Promise<string> {
  return createHash('sha256')
    .update(await realpath(dataDir))
    .digest('hex')
    .slice(0, 8);
}

/** Exists and is not a zombie (the members' parent is PID 1 once `up` has exited; it reaps them in its own time). */
async function runs(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat !== undefined && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** What still runs or is held on the host for the cluster: its PIDs, processes naming its dir, mounts, loop devices, namespaces, nft tables. */
async function leftovers(dir: string, pids: number[], installations: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const pid of pids) if (await runs(pid)) found.push(`pid ${pid} still runs`);
  for (const line of (await readFile('/proc/mounts', 'utf8')).split('\n')) if (line.includes(dir)) found.push(`mount: ${line}`);
  for (const dev of await readdir('/sys/block')) {
    const backing = await readFile(`/sys/block/${dev}/loop/backing_file`, 'utf8').catch(() => '');
    if (backing.includes(dir)) found.push(`loop: ${dev} ${backing.trim()}`);
  }
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(dir)) found.push(`process ${pid}: ${cmd.replaceAll('\0', ' ').slice(0, 200)}`);
  }
  const namespaces = await readdir('/run/netns').catch(() => [] as string[]);
  const tables = (await run('nft', ['list', 'tables'])).stdout.split('\n');
  for (const inst of installations) {
    found.push(...namespaces.filter((n) => n.includes(inst)).map((n) => `netns ${n}`));
    found.push(...tables.filter((l) => l.includes(inst)).map((l) => `nft ${l}`));
  }
  if (existsSync(dir)) found.push(`${dir} still exists: ${(await readdir(dir)).join(', ')}`);
  return found;
}

interface Status {
  regions: {
    name: string;
    apis: { name: string; url: string; pid: number; running: boolean; up: boolean }[];
    nodes: { id: string; pid: number; running: boolean; state: string; sandboxes: number; vcpus: number; memory_mib: number }[];
  }[];
}

test('cluster up --nodes 1 --json, status, rotate-certs, cordon, down: a working cluster, then nothing left behind', async (t) => {
  // Empty, so `up` takes it (it makes it traversable for PostgreSQL's user; its parent /tmp is).
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-cluster-'));
  t.after(async () => {
    // A failed assertion still takes the cluster down.
    if (existsSync(dir)) await cli(['cluster', 'down', '--dir', dir]);
    await rm(dir, { recursive: true, force: true });
  });

  const up = await cli(['cluster', 'up', '--nodes', '1', '--json', '--dir', dir]);
  assert.equal(up.code, 0, up.stderr);
  const summary = JSON.parse(up.stdout) as { api_key: string; regions: { name: string; api_urls: string[]; nodes: string[] }[] };
  assert.deepEqual(Object.keys(summary).sort(), ['api_key', 'regions']);
  assert.equal(summary.regions.length, 1);
  const [region] = summary.regions;
  assert.equal(region!.name, 'local');
  assert.equal(region!.api_urls.length, 2, 'two API replicas per region');
  assert.deepEqual(region!.nodes, ['local-node-1']);

  const again = await cli(['cluster', 'up', '--nodes', '1', '--dir', dir]);
  assert.notEqual(again.code, 0, 'a second up on a running cluster fails');
  assert.match(again.stderr, /already up/);

  // A sandbox made through one replica and used through the other runs on the node.
  const [first, second] = region!.api_urls.map((u) => new Api(u, summary.api_key));
  const created = await first!.post('/sandboxes', {});
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const ran = await second!.post(`/sandboxes/${created.body.id}/exec`, { command: 'echo cluster' });
  assert.equal(ran.status, 200, JSON.stringify(ran.body));
  assert.equal(ran.body.stdout, 'cluster\n');

  // Members speak over mutual TLS with certificates `up` issued; a new CA replaces the old while they run.
  const rotated = await cli(['cluster', 'rotate-certs', '--new-ca', '--dir', dir]);
  assert.equal(rotated.code, 0, rotated.stderr);
  assert.match(rotated.stdout, /certificates rotated \(new CA\)/);
  assert.match(rotated.stderr, /trust the new CA only/);
  const afterRotation = await first!.post(`/sandboxes/${created.body.id}/exec`, { command: 'echo rotated' });
  assert.equal(afterRotation.body.stdout, 'rotated\n', JSON.stringify(afterRotation.body));

  const statusRun = await cli(['cluster', 'status', '--json', '--dir', dir]);
  assert.equal(statusRun.code, 0, statusRun.stderr);
  const status = JSON.parse(statusRun.stdout) as Status;
  const apis = status.regions[0]!.apis;
  const [node] = status.regions[0]!.nodes;
  assert.deepEqual(
    apis.map((a) => [a.url, a.up, a.running]),
    region!.api_urls.map((u) => [u, true, true]),
  );
  assert.equal(node!.id, 'local-node-1');
  assert.equal(node!.state, 'ready');
  assert.equal(node!.running, true);
  assert.equal(node!.sandboxes, 1, 'the node carries the sandbox');
  assert.ok(node!.vcpus > 0 && node!.memory_mib > 0, JSON.stringify(node));

  assert.equal((await cli(['cluster', 'cordon', 'local-node-1', '--dir', dir])).code, 0);
  const cordoned = JSON.parse((await cli(['cluster', 'status', '--json', '--dir', dir])).stdout) as Status;
  assert.equal(cordoned.regions[0]!.nodes[0]!.state, 'cordoned');

  const pids = [...apis.map((a) => a.pid), node!.pid];
  const installations = await Promise.all(['local-api-1', 'local-api-2', 'local-node-1'].map((m) => installation(join(dir, m))));
  assert.ok((await leftovers(dir, pids, installations)).length > 0, 'a running cluster leaves traces to find');

  const down = await cli(['cluster', 'down', '--dir', dir]);
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stdout, /stopped and removed/);
  assert.deepEqual(await leftovers(dir, pids, installations), []);
});
