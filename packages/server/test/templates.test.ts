import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Api, parseSse, ServerProcess } from './helpers/server-process.ts';

let server: ServerProcess;
let api: Api;

// Team layers and build logs live under the server's data dir, which stop() removes.
before(async () => {
  server = await ServerProcess.start({
    SANDPIT_DRIVER: 'container',
    SANDPIT_WARM_POOL: '1',
    SANDPIT_WARM_POOL_INTERVAL_MS: '100',
    SANDPIT_MAX_CONCURRENT_BUILDS: '1',
    SANDPIT_TEMPLATE_MAX_MIB: '2',
  });
  api = new Api(server.url, server.key);
});
after(async () => {
  await server?.stop();
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Posts a build, follows its log stream to the end, and returns the template, build and log lines. */
async function build(body: unknown) {
  const res = await api.post('/templates', body);
  assert.equal(res.status, 202, JSON.stringify(res.body));
  assert.equal(res.body.status === 'building' || res.body.usable, true);
  const logs = await fetch(`${server.url}/templates/${res.body.id}/builds/${res.body.build_id}/logs`, { headers: { 'x-api-key': server.key } });
  assert.match(logs.headers.get('content-type') ?? '', /text\/event-stream/);
  const { events } = parseSse(await logs.text());
  const last = events.at(-1);
  assert.equal(last.finished, true);
  const t = (await api.get(`/templates/${res.body.id}`)).body;
  const b = (await api.get(`/templates/${res.body.id}/builds/${res.body.build_id}`)).body;
  return { t, b, last, lines: events.filter((e) => e.line !== undefined).map((e) => e.line as string) };
}

const APP = {
  name: 'web',
  steps: [
    { type: 'run', command: 'echo built-by-$(id -un) > /home/user/built.txt && echo step-one-output' },
    { type: 'copy', path: '/opt/app/hello.sh', content_base64: b64('#!/bin/sh\necho hello from file\n'), mode: '0755', user: 'root' },
    { type: 'env', env: { APP_MODE: 'test' } },
    { type: 'workdir', path: '/srv/app' },
    { type: 'run', command: 'echo v1 > version.txt' },
  ],
  start_cmd: 'echo started > /tmp/started; exec python3 -m http.server 8000',
  ready_cmd: 'curl -sf http://127.0.0.1:8000/ >/dev/null',
};

async function exec(sb: { id: string }, command: string) {
  const res = await api.post(`/sandboxes/${sb.id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { stdout: string; stderr: string; exit_code: number };
}

describe('template builds', () => {
  test('a template with files, env, workdir, start and ready commands; its sandboxes see all of it', async () => {
    const { t, b, last, lines } = await build(APP);
    assert.equal(last.status, 'ready', lines.join('\n'));
    assert.equal(t.status, 'ready');
    assert.equal(t.usable, true);
    assert.ok(lines.includes('step-one-output'), 'step output is in the log');
    assert.deepEqual(
      b.steps.map((s: { result: string }) => s.result),
      ['ran', 'ran', 'config', 'ran', 'ran'],
    );

    const sb = (await api.post('/sandboxes', { from_template: 'web' })).body;
    assert.equal(sb.template_id, t.id);
    // Create returned only once ready_cmd passed: the server answers on the first exec.
    const r = await exec(sb, 'pwd; cat /home/user/built.txt version.txt; /opt/app/hello.sh; echo $APP_MODE; cat /tmp/started; curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8000/');
    assert.equal(r.stdout, '/srv/app\nbuilt-by-user\nv1\nhello from file\ntest\nstarted\n200', r.stderr);
    assert.equal((await api.post('/sandboxes', { from_template: t.id })).status, 201, 'by UUID too');

    // Deleting a template in use is refused.
    assert.equal((await api.del('/templates/web')).status, 409);
  });

  test('a rebuild whose last step changed re-runs only that step', async () => {
    const steps = [...APP.steps.slice(0, 4), { type: 'run', command: 'echo v2 > version.txt' }];
    const { b, last, lines } = await build({ ...APP, steps });
    assert.equal(last.status, 'ready', lines.join('\n'));
    assert.deepEqual(
      b.steps.map((s: { result: string }) => s.result),
      ['cached', 'cached', 'config', 'cached', 'ran'],
    );
    assert.ok(lines.includes('steps run: 5'));
    const sb = (await api.post('/sandboxes', { from_template: 'web' })).body;
    assert.equal((await exec(sb, 'cat version.txt')).stdout, 'v2\n');
  });

  test('GET /templates lists curated and team templates; curated ones are read-only', async () => {
    const list = (await api.get('/templates')).body.templates;
    const names = list.map((t: { name: string }) => t.name);
    for (const n of ['platform/python-3.11', 'platform/node-22', 'web']) assert.ok(names.includes(n), n);
    assert.equal((await api.get('/templates/platform%2Fnode-22')).body.curated, true);
    assert.equal((await api.del('/templates/platform%2Fnode-22')).status, 403);
    assert.equal((await api.post('/templates', { name: 'platform-x', steps: [{ type: 'run', command: 'true' }] })).status, 403);
  });

  test('bad input answers at once', async () => {
    const bad = async (body: unknown, status: number) => {
      const res = await api.post('/templates', body);
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.equal(typeof res.body.error.code, 'string');
    };
    await bad({ name: 'x', steps: [] }, 400);
    await bad({ name: 'x', steps: [{ type: 'run' }] }, 400);
    await bad({ name: 'x', steps: [{ type: 'copy', path: 'relative', content_base64: '' }] }, 400);
    await bad({ name: 'x', steps: [{ type: 'copy', path: '/a', content_base64: '***' }] }, 400);
    await bad({ name: 'x', base: 'nope', steps: [{ type: 'run', command: 'true' }] }, 404);
    assert.equal((await api.post('/sandboxes', { from_template: 'nope' })).status, 404);
  });

  test('one build at a time per team here: a second answers 429 too_many_builds', async () => {
    const first = await api.post('/templates', { name: 'slow', steps: [{ type: 'run', command: 'sleep 1' }] });
    assert.equal(first.status, 202);
    const second = await api.post('/templates', { name: 'other', steps: [{ type: 'run', command: 'true' }] });
    assert.equal(second.status, 429);
    assert.equal(second.body.error.code, 'too_many_builds');
    await fetch(`${server.url}/templates/${first.body.id}/builds/${first.body.build_id}/logs`, { headers: { 'x-api-key': server.key } }).then((r) => r.text());
    assert.equal((await api.del('/templates/slow')).status, 204);
    assert.equal((await api.get('/templates/slow')).status, 404);
  });
});

describe('failed builds carry the contract codes, the failing output, and are not usable', () => {
  const cases: [string, unknown, string, RegExp?][] = [
    ['step_failed', { steps: [{ type: 'run', command: 'echo about-to-fail; exit 3' }] }, 'step_failed: step 1/1 (run) exited with code 3', /about-to-fail/],
    ['start_cmd_failed', { steps: [{ type: 'run', command: 'true' }], start_cmd: 'echo start-dies; exit 4' }, 'start_cmd_failed: start_cmd exited with code 4', /start-dies/],
    ['ready_cmd_failed', { start_cmd: 'sleep 600', ready_cmd: 'echo not-yet; false', ready_timeout_s: 1 }, 'ready_cmd_failed: ready_cmd did not succeed within 1 s', /not-yet/],
    // Without the user account, sandboxes of the result cannot run commands: the next step's sandbox fails its boot check.
    [
      'boot_failed',
      {
        steps: [
          { type: 'run', user: 'root', command: 'userdel user' },
          { type: 'run', command: 'true' },
        ],
      },
      'boot_failed: the build sandbox cannot run commands as user',
    ],
    // SANDPIT_TEMPLATE_MAX_MIB=2 for this server.
    ['snapshot_failed', { steps: [{ type: 'run', command: 'head -c 3000000 /dev/zero > big' }] }, 'snapshot_failed: image_too_large'],
  ];
  for (const [code, body, prefix, output] of cases) {
    test(code, async () => {
      const { t, b, last, lines } = await build({ name: `fail-${code.replace(/_/g, '-')}`, ...(body as object) });
      assert.equal(last.status, 'failed');
      assert.ok(last.error.startsWith(prefix), last.error);
      assert.equal(t.status, 'failed');
      assert.equal(t.error, last.error);
      assert.equal(b.error, last.error);
      assert.equal(t.usable, false);
      if (output) assert.match(lines.join('\n'), output);
      const res = await api.post('/sandboxes', { from_template: t.name });
      assert.equal(res.status, 409, 'nothing half-built is usable');
    });
  }
});

describe('warm pool', () => {
  async function poolReady(want: number) {
    for (let i = 0; i < 200; i++) {
      if ((await api.get('/info')).body.warm_pool.ready >= want) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail('the pool did not refill');
  }

  test('create takes a pre-started sandbox, personalizes it, and the pool refills; nothing leaks between owners', async () => {
    await poolReady(1);
    const a = (await api.post('/sandboxes', { name: 'a', env: { SECRET_A: 'alpha' }, metadata: { k: 'a' } })).body;
    await poolReady(1);
    const b = (await api.post('/sandboxes', { name: 'b', env: { SECRET_B: 'beta' } })).body;
    assert.notEqual(a.id, b.id);
    assert.notEqual(a.access_token, b.access_token);
    assert.equal(b.name, 'b');
    assert.deepEqual(a.metadata, { k: 'a' });
    assert.equal((await exec(a, 'echo ${SECRET_A:-none} ${SECRET_B:-none}')).stdout, 'alpha none\n');
    assert.equal((await exec(b, 'echo ${SECRET_A:-none} ${SECRET_B:-none}; env | grep -c alpha || true')).stdout, 'none beta\n0\n');
    // A's token does not open B.
    const dp = await new Api(server.url).post('/exec', { command: 'true' }, { 'x-platform-sandbox-id': b.id, 'x-access-token': a.access_token });
    assert.equal(dp.status, 401);
    await poolReady(1);
  });
});
