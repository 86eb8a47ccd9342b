import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, realpath, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Internet } from './helpers/internet.ts';
import { Api, ServerProcess } from './helpers/server-process.ts';

/** Issue 11, item 9: faults from outside the platform; it stays up, loses nothing it acknowledged, and recovers by itself. */

function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function envelope(res: { status: number; body: any }, status: number, code: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body?.error?.code, code, JSON.stringify(res.body));
  assert.equal(typeof res.body.error.message, 'string');
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    const v = await fn();
    if (v !== undefined) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the egress proxy listener destroyed from outside', () => {
  let dir: string;
  let inet: Internet;
  let server: ServerProcess;
  let api: Api;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sandpit-faults-'));
    inet = await Internet.start(dir);
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_DNS_UPSTREAM: `${inet.dns}:53`, SANDPIT_EGRESS_UPSTREAM_CA: inet.caFile });
    api = new Api(server.url, server.key);
  });
  after(async () => {
    await server?.stop();
    inet?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const curl = async (id: string) => {
    const r = await api.post(`/sandboxes/${id}/exec`, { command: "curl -s -m 3 -o /dev/null -w '%{http_code}' http://api.example.test/", timeout_s: 20 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.stdout as string;
  };

  test('the platform stays up and sandboxes reach out again without an operator', async () => {
    const sb = (await api.post('/sandboxes', {})).body;
    assert.equal(await curl(sb.id), '200');

    // The proxy is the TCP listener the installation's nft table redirects sandbox connections to.
    const installation = createHash('sha256')
      .update(await realpath(server.dataDir))
      .digest('hex')
      .slice(0, 8);
    const port = sh('nft', ['list', 'table', 'inet', `sandpit_${installation}`]).match(/tcp redirect to :(\d+)/)?.[1];
    assert.ok(port, 'no proxy redirect');
    // The kernel destroys the listening socket; Node is told nothing.
    sh('ss', ['-K', '-t', 'state', 'listening', `sport = :${port}`]);

    await until('egress through the proxy again', async () => ((await curl(sb.id)) === '200' ? true : undefined));
    assert.equal((await api.get('/info')).status, 200);
    assert.match(sh('ss', ['-Htln', `sport = :${port}`]), new RegExp(`:${port}\\b`), 'listening on the same port again');
    assert.equal((await api.get(`/sandboxes/${sb.id}`)).body.status, 'active');
  });
});

describe('the data disk full', () => {
  let mnt: string;
  let server: ServerProcess;
  let api: Api;

  before(async () => {
    mnt = await mkdtemp(join(tmpdir(), 'sandpit-disk-'));
    sh('mount', ['-t', 'tmpfs', '-o', 'size=256m', 'tmpfs', mnt]);
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_RATE_LIMIT: '0', SANDPIT_DISK_RESERVE_MIB: '32' }, { dataDir: join(mnt, 'data') });
    api = new Api(server.url, server.key);
  });
  after(async () => {
    await rm(join(mnt, 'fill'), { force: true });
    await server?.stop();
    spawnSync('umount', [mnt]);
    await rm(mnt, { recursive: true, force: true });
  });

  test('writes answer 507 in the envelope, nothing acknowledged is lost, and all works again once space is freed', async () => {
    const sb = (await api.post('/sandboxes', {})).body;
    const dp = { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.access_token };
    const upload = (path: string, body: string) => fetch(`${server.url}/files?path=${path}`, { method: 'PUT', headers: dp, body }).then(async (r) => ({ status: r.status, body: await r.json() }));
    assert.equal((await upload('/home/user/kept.txt', 'acknowledged')).status, 200);
    assert.equal((await api.patch(`/sandboxes/${sb.id}`, { metadata: { kept: 'yes' } })).status, 200);

    // Filled to the last block (dd stops at ENOSPC).
    spawnSync('dd', ['if=/dev/zero', `of=${join(mnt, 'fill')}`, 'bs=1M']);
    const st = await statfs(mnt);
    assert.ok(st.bavail * st.bsize < 1024 * 1024, `${st.bavail * st.bsize} bytes still free`);

    envelope(await api.post('/sandboxes', {}), 507, 'insufficient_storage');
    envelope(await upload('/home/user/new.txt', 'x'), 507, 'insufficient_storage');
    // Reads and commands go on; what was acknowledged is all there.
    const view = await api.get(`/sandboxes/${sb.id}`);
    assert.deepEqual([view.status, view.body.status, view.body.metadata], [200, 'active', { kept: 'yes' }]);
    const kept = await fetch(`${server.url}/files?path=/home/user/kept.txt`, { headers: dp });
    assert.equal(await kept.text(), 'acknowledged');
    const cat = await api.post(`/sandboxes/${sb.id}/exec`, { command: 'cat /home/user/kept.txt' });
    assert.deepEqual([cat.body.exit_code, cat.body.stdout], [0, 'acknowledged']);

    await rm(join(mnt, 'fill'));
    const again = await until('a create after space was freed', async () => {
      const r = await api.post('/sandboxes', {});
      return r.status === 507 ? undefined : r;
    });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal((await upload('/home/user/new.txt', 'later')).status, 200);
    const run = await api.post(`/sandboxes/${again.body.id}/exec`, { command: 'echo ok' });
    assert.equal(run.body.stdout, 'ok\n');
  });
});

describe('a gVisor gofer killed from the host', () => {
  let server: ServerProcess;
  let api: Api;

  before(async () => {
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_RATE_LIMIT: '0' });
    api = new Api(server.url, server.key);
  });
  after(async () => {
    await server?.stop();
  });

  /** The gofer serving one sandbox: its bundle path names the data dir and the sandbox. (engine-pressure.test.ts kills the sentry.) */
  const goferPid = (id: string) => {
    const uuid = id.replace(/^sb-[a-z0-9]+-/, '');
    const line = sh('ps', ['-eo', 'pid=,args='])
      .split('\n')
      .find((l) => l.includes('runsc-gofer') && l.includes(server.dataDir) && l.includes(uuid));
    assert.ok(line, `no gofer for ${id}`);
    return Number(line.trim().split(/\s+/)[0]);
  };
  const echo = async (id: string) => (await api.post(`/sandboxes/${id}/exec`, { command: 'echo ok', timeout_s: 10 })).body.stdout;

  test('its sandbox is failed with a reason within seconds; the neighbour and new creates carry on', async () => {
    const [victim, neighbour] = [(await api.post('/sandboxes', {})).body, (await api.post('/sandboxes', {})).body];
    assert.equal(await echo(victim.id), 'ok\n');
    process.kill(goferPid(victim.id), 'SIGKILL');

    const view = await until('the sandbox failed', async () => {
      const v = (await api.get(`/sandboxes/${victim.id}`)).body;
      return v.status === 'active' ? undefined : v;
    });
    assert.deepEqual([view.status, view.failure_reason], ['failed', 'engine_exited']);
    envelope(await api.post(`/sandboxes/${victim.id}/exec`, { command: 'true' }), 409, 'conflict');
    assert.equal(await echo(neighbour.id), 'ok\n');
    const fresh = await api.post('/sandboxes', {});
    assert.equal(fresh.status, 201, JSON.stringify(fresh.body));
    assert.equal(await echo(fresh.body.id), 'ok\n');
    assert.equal((await api.del(`/sandboxes/${victim.id}`)).status, 204);
  });
});
