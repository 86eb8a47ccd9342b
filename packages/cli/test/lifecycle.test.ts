import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { Api, CLI, freePort, IMAGE_DIR, ServerProcess } from '../../server/test/helpers/server-process.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
const run = promisify(execFile);

/** Everything on the host that still names the data directory: mounts, loop devices, runsc processes. */
async function leftovers(dataDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const line of (await readFile('/proc/mounts', 'utf8')).split('\n')) if (line.includes(dataDir)) found.push(`mount: ${line}`);
  for (const dev of await readdir('/sys/block')) {
    const backing = await readFile(`/sys/block/${dev}/loop/backing_file`, 'utf8').catch(() => '');
    if (backing.includes(dataDir)) found.push(`loop: ${dev} ${backing.trim()}`);
  }
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(dataDir)) found.push(`process ${pid}: ${cmd.replaceAll('\0', ' ').slice(0, 200)}`);
  }
  return found;
}

async function netObjects(installation: string): Promise<string[]> {
  const ns = (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.includes(installation));
  const tables = (await run('nft', ['list', 'tables'])).stdout.split('\n').filter((l) => l.includes(installation));
  return [...ns, ...tables];
}

describe('./sandpit down', () => {
  // gVisor: its runsc processes, layer store (btrfs on a loop device, as crun's), namespaces and nft table.
  test('--all stops the server and leaves nothing of its data dir behind', async () => {
    const server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor' });
    try {
      const api = new Api(server.url, server.key);
      const sb = await api.post('/sandboxes', {});
      assert.equal(sb.status, 201, JSON.stringify(sb.body));
      assert.ok((await leftovers(server.dataDir)).length > 0, 'a running sandbox leaves traces to find');
      const installation = createHash('sha256')
        .update(await realpath(server.dataDir))
        .digest('hex')
        .slice(0, 8);
      const exited = new Promise((r) => server.child?.once('exit', r));

      const down = await run(process.execPath, [CLI, 'down', '--all'], { env: { ...process.env, SANDPIT_DATA_DIR: server.dataDir, SANDPIT_IMAGE_DIR: IMAGE_DIR } });
      assert.match(down.stdout, /stopped/);
      // down returns once the server has exited.
      assert.equal(await Promise.race([exited.then(() => 'exited'), new Promise((r) => setTimeout(() => r('running'), 5000))]), 'exited');
      assert.deepEqual(await leftovers(server.dataDir), []);
      assert.deepEqual(await netObjects(installation), []);
      await rm(server.dataDir, { recursive: true });
    } finally {
      await server.stop();
    }
  });

  test('without a running server it says so and still cleans up with --all', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandpit-down-'));
    try {
      const r = await run(process.execPath, [CLI, 'down', '--all'], { env: { ...process.env, SANDPIT_DATA_DIR: dataDir, SANDPIT_IMAGE_DIR: IMAGE_DIR } });
      assert.match(r.stdout, /no server running/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('npm start', () => {
  test("on the machine's own Node.js starts the platform as ./sandpit up does", { skip: !existsSync('/usr/bin/node') || !existsSync('/usr/bin/npm') }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandpit-npmstart-'));
    const port = await freePort();
    const env = { ...process.env, PATH: `/usr/bin:/bin:/usr/sbin:/sbin`, PORT: String(port), HOST: '127.0.0.1', SANDPIT_DATA_DIR: dataDir, SANDPIT_IMAGE_DIR: IMAGE_DIR, SANDPIT_DRIVER: 'container' };
    assert.notEqual((await run('/usr/bin/node', ['-p', 'process.versions.node.split(".")[0]'], { env })).stdout.trim(), '24');
    // Its own process group, so the npm -> shell -> node chain it starts can be ended together.
    const child = spawn('/usr/bin/npm', ['start', '--silent'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      const deadline = Date.now() + 120_000;
      while (!out.includes('Sandpit is up') && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.match(out, /Sandpit is up/, out);
      const info = await fetch(`http://127.0.0.1:${port}/info`);
      assert.equal(info.status, 200);
    } finally {
      if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGTERM');
      await exited;
      await run(process.execPath, [CLI, 'down', '--all'], { env: { ...process.env, SANDPIT_DATA_DIR: dataDir, SANDPIT_IMAGE_DIR: IMAGE_DIR } }).catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
