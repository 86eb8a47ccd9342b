import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ApiError,
  AuthError,
  BadRequestError,
  ConfigurationError,
  ConflictError,
  ConnectionError,
  InsufficientStorageError,
  NotFoundError,
  RateLimitError,
  Sandbox,
  SandpitClient,
  ServerError,
  TimeoutError,
} from '../src/index.ts';
import { envelope, json, scriptedServer } from './helpers/scripted-server.ts';

const KEY = 'sp_unit_key';
const client = (url: string, extra: ConstructorParameters<typeof SandpitClient>[0] = {}) => new SandpitClient({ apiUrl: url, apiKey: KEY, retryDelayMs: 5, ...extra });

const SANDBOX = {
  id: 'sb-local-6f1c1f0e-2a8e-4f57-9a3e-0a4f7c1d2b3c',
  template_id: 'platform/base',
  status: 'active',
  driver: 'container',
  metadata: {},
  preview_access: 'public',
  secrets: [],
  resources: { vcpu_count: 1, memory_mib: 1024, disk_mib: 4096 },
  region: 'local',
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-01T00:00:00.000Z',
};

describe('retries', () => {
  it('retries a GET after 503 and returns the 200', async (t) => {
    const srv = await scriptedServer((_req, res, n) => (n === 1 ? json(res, 503, envelope('unavailable')) : json(res, 200, SANDBOX)));
    t.after(() => srv.close());
    const info = await client(srv.url).sandboxes.get(SANDBOX.id);
    assert.equal(info.id, SANDBOX.id);
    assert.equal(srv.seen.length, 2);
    assert.equal(srv.seen[1]?.headers['x-api-key'], KEY);
  });

  it('never retries a POST, not even on 503', async (t) => {
    const srv = await scriptedServer((_req, res) => json(res, 503, envelope('unavailable', 'try later')));
    t.after(() => srv.close());
    const err = await client(srv.url)
      .sandboxes.create({ name: 'x' })
      .catch((e: unknown) => e);
    assert.ok(err instanceof ServerError);
    assert.equal(err.status, 503);
    assert.equal(err.code, 'unavailable');
    assert.equal(err.message, 'try later');
    assert.equal(srv.seen.length, 1);
    assert.deepEqual(JSON.parse(srv.seen[0]?.body ?? ''), { name: 'x' });
  });

  it('never retries a PATCH; retries a DELETE after 500', async (t) => {
    const srv = await scriptedServer((req, res, n) => {
      if (req.method === 'PATCH') return json(res, 500, envelope('internal'));
      if (n === 2) return json(res, 500, envelope('internal'));
      res.writeHead(204).end();
    });
    t.after(() => srv.close());
    const c = client(srv.url);
    await assert.rejects(c.sandboxes.update(SANDBOX.id, { name: 'y' }), ServerError);
    assert.equal(srv.seen.length, 1);
    assert.equal(await c.sandboxes.kill(SANDBOX.id), true);
    assert.deepEqual(
      srv.seen.map((s) => s.method),
      ['PATCH', 'DELETE', 'DELETE'],
    );
  });

  it('honours Retry-After on 429', async (t) => {
    const srv = await scriptedServer((_req, res, n) => (n === 1 ? json(res, 429, envelope('rate_limited'), { 'retry-after': '1' }) : json(res, 200, { sandboxes: [] })));
    t.after(() => srv.close());
    const started = Date.now();
    const pages = [];
    for await (const page of client(srv.url).sandboxes.list()) pages.push(page);
    assert.deepEqual(pages, [[]]);
    assert.equal(srv.seen.length, 2);
    // The backoff alone would have waited about 5 ms.
    assert.ok(Date.now() - started >= 950, `retried after ${Date.now() - started} ms`);
  });

  it('retries a GET after a network error, but not a POST', async (t) => {
    const srv = await scriptedServer((req, res, n) => {
      if (n === 1 || req.method === 'POST') return res.socket?.destroy();
      json(res, 200, { version: '0.1.0' });
    });
    t.after(() => srv.close());
    const c = client(srv.url);
    assert.equal((await c.info()).version, '0.1.0');
    assert.equal(srv.seen.length, 2);
    assert.equal(srv.seen[1]?.headers['x-api-key'], undefined, '/info is sent without the key');
    await assert.rejects(c.sandboxes.create(), ConnectionError);
    assert.equal(srv.seen.length, 3);
  });

  it('gives up after maxRetries and reports the last answer', async (t) => {
    // 504 has no code of the registry's, so the fallback shows: the code comes from the status.
    const srv = await scriptedServer((_req, res) => json(res, 504, 'gateway timeout'));
    t.after(() => srv.close());
    const err = await client(srv.url, { maxRetries: 2 })
      .me()
      .catch((e: unknown) => e);
    assert.ok(err instanceof ServerError);
    assert.equal(err.status, 504);
    assert.equal(err.code, 'http_504', 'no envelope: the code comes from the status');
    assert.equal(srv.seen.length, 3);
  });

  it('stops retrying when the wait would pass the deadline', async (t) => {
    const srv = await scriptedServer((_req, res) => json(res, 429, envelope('rate_limited'), { 'retry-after': '30' }));
    t.after(() => srv.close());
    const started = Date.now();
    await assert.rejects(client(srv.url, { timeoutMs: 2000 }).me(), RateLimitError);
    assert.equal(srv.seen.length, 1);
    assert.ok(Date.now() - started < 1000);
  });
});

describe('errors', () => {
  const cases: [number, string, typeof ApiError][] = [
    [400, 'bad_request', BadRequestError],
    [401, 'unauthorized', AuthError],
    [404, 'not_found', NotFoundError],
    [409, 'conflict', ConflictError],
    [429, 'too_many_sandboxes', RateLimitError],
  ];
  for (const [status, code, Class] of cases) {
    it(`maps ${status} ${code} to ${Class.name}`, async (t) => {
      const srv = await scriptedServer((_req, res) => json(res, status, envelope(code, `message ${status}`)));
      t.after(() => srv.close());
      const err = await client(srv.url, { maxRetries: 0 })
        .sandboxes.create()
        .catch((e: unknown) => e);
      assert.ok(err instanceof Class, String(err));
      assert.ok(err instanceof ApiError);
      assert.equal(err.status, status);
      assert.equal(err.code, code);
      assert.equal(err.message, `message ${status}`);
      assert.equal(err.name, Class.name);
    });
  }

  it('maps 507 to InsufficientStorageError, a ServerError, and does not retry it even for a GET', async (t) => {
    const srv = await scriptedServer((_req, res) => json(res, 507, envelope('insufficient_storage', 'the volume is full')));
    t.after(() => srv.close());
    const err = await client(srv.url)
      .volumes.files.read('v', '/x')
      .catch((e: unknown) => e);
    assert.ok(err instanceof InsufficientStorageError, String(err));
    assert.ok(err instanceof ServerError);
    assert.deepEqual([err.status, err.code], [507, 'insufficient_storage']);
    assert.equal(srv.seen.length, 1);
    assert.equal(srv.seen[0]?.url, '/volumes/v/files?path=%2Fx');
  });

  it('kill helpers swallow 404', async (t) => {
    const srv = await scriptedServer((_req, res) => json(res, 404, envelope('not_found')));
    t.after(() => srv.close());
    assert.equal(await Sandbox.kill(SANDBOX.id, { apiUrl: srv.url, apiKey: KEY }), false);
    assert.equal(srv.seen.length, 1, '404 is not retried');
  });

  it('refuses to send a control-plane call without an API key', async () => {
    await assert.rejects(new SandpitClient({ apiUrl: 'http://127.0.0.1:9', apiKey: '' }).me(), ConfigurationError);
  });

  it("rethrows the caller's abort as is, without retrying", async (t) => {
    const ctl = new AbortController();
    // Given up once the request is in flight (a timer could fire before it is sent on a loaded host).
    const srv = await scriptedServer(() => ctl.abort(new Error('caller gave up')));
    t.after(() => srv.close());
    await assert.rejects(client(srv.url).me({ signal: ctl.signal }), /caller gave up/);
    assert.equal(srv.seen.length, 1);
  });
});

describe('timeouts', () => {
  it('a call with no answer fails with TimeoutError at its deadline', async (t) => {
    const srv = await scriptedServer(() => {});
    t.after(() => srv.close());
    const started = Date.now();
    await assert.rejects(client(srv.url, { timeoutMs: 300 }).sandboxes.get(SANDBOX.id), TimeoutError);
    const took = Date.now() - started;
    assert.ok(took >= 250 && took < 2000, `took ${took} ms`);
  });

  it('a body that stalls after the headers fails with TimeoutError', async (t) => {
    const srv = await scriptedServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"sandboxes": [');
    });
    t.after(() => srv.close());
    await assert.rejects(client(srv.url).sandboxes.get(SANDBOX.id, { timeoutMs: 300 }), TimeoutError);
  });

  it('the exec deadline follows the command time limit', async (t) => {
    const srv = await scriptedServer((_req, res) => setTimeout(() => json(res, 200, { stdout: 'late', stderr: '', exit_code: 0 }), 400));
    t.after(() => srv.close());
    const r = await client(srv.url, { timeoutMs: 100 }).sandboxes.exec(SANDBOX.id, 'sleep 0.4', { timeoutS: 5 });
    assert.equal(r.stdout, 'late');
  });
});

describe('streams', () => {
  const sse = (res: import('node:http').ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });
  const data = (ev: object) => `data: ${JSON.stringify(ev)}\n\n`;

  it('parses data lines split anywhere and ignores every other line', async (t) => {
    const whole =
      ': keepalive\n\n' +
      data({ timestamp: 't', stdout: 'héllo ' }) +
      'event: ignored\nid: 7\n\n' +
      data({ timestamp: 't', stderr: 'warn\n' }) +
      ': keepalive\r\n\r\n' +
      data({ timestamp: 't', stdout: 'wörld' }) +
      data({ timestamp: 't', exit_code: 3, finished: true });
    const bytes = Buffer.from(whole);
    const srv = await scriptedServer((_req, res) => {
      sse(res);
      // Three-byte pieces split JSON, lines and multi-byte characters alike.
      let at = 0;
      const tick = setInterval(() => {
        res.write(bytes.subarray(at, at + 3));
        at += 3;
        if (at >= bytes.length) clearInterval(tick);
      }, 1);
    });
    t.after(() => srv.close());
    let out = '';
    let err = '';
    const r = await client(srv.url).sandboxes.execStream(SANDBOX.id, 'x', { onStdout: (c) => (out += c), onStderr: (c) => (err += c) });
    assert.deepEqual(r, { exitCode: 3 });
    assert.equal(out, 'héllo wörld');
    assert.equal(err, 'warn\n');
    assert.equal(srv.seen[0]?.url, `/sandboxes/${SANDBOX.id}/exec/stream`);
    assert.deepEqual(JSON.parse(srv.seen[0]?.body ?? ''), { command: 'x' });
  });

  it('keepalives hold a quiet stream open; silence past the idle deadline is a TimeoutError', async (t) => {
    const srv = await scriptedServer((req, res) => {
      sse(res);
      if (req.body.includes('quiet')) {
        const tick = setInterval(() => res.write(': keepalive\n\n'), 50);
        setTimeout(() => {
          clearInterval(tick);
          res.end(data({ timestamp: 't', exit_code: 0, finished: true }));
        }, 500);
      } else res.write(data({ timestamp: 't', stdout: 'then nothing' }));
    });
    t.after(() => srv.close());
    const c = client(srv.url);
    assert.deepEqual(await c.sandboxes.execStream(SANDBOX.id, 'quiet', { idleTimeoutMs: 200 }), { exitCode: 0 });
    const started = Date.now();
    await assert.rejects(c.sandboxes.execStream(SANDBOX.id, 'silent', { idleTimeoutMs: 200 }), TimeoutError);
    assert.ok(Date.now() - started < 2000);
  });

  it('an error answer before the stream is a typed error; an early end is a ConnectionError', async (t) => {
    const srv = await scriptedServer((req, res) => {
      if (req.body.includes('missing')) return json(res, 404, envelope('not_found'));
      sse(res);
      res.end(data({ timestamp: 't', stdout: 'partial' }));
    });
    t.after(() => srv.close());
    const c = client(srv.url);
    await assert.rejects(c.sandboxes.execStream(SANDBOX.id, 'missing'), NotFoundError);
    await assert.rejects(c.sandboxes.execStream(SANDBOX.id, 'cut'), ConnectionError);
  });

  it('a stream whose answer never starts fails with TimeoutError', async (t) => {
    const srv = await scriptedServer(() => {});
    t.after(() => srv.close());
    await assert.rejects(client(srv.url).sandboxes.execStream(SANDBOX.id, 'x', { timeoutMs: 200 }), TimeoutError);
  });

  it('reports the exec error of the final event', async (t) => {
    const srv = await scriptedServer((_req, res) => {
      sse(res);
      res.end(data({ timestamp: 't', exit_code: 124, finished: true, error: 'timed out' }));
    });
    t.after(() => srv.close());
    assert.deepEqual(await client(srv.url).sandboxes.execStream(SANDBOX.id, 'x'), { exitCode: 124, error: 'timed out' });
  });
});

describe('sandbox and data plane', () => {
  it('create -> commands.run goes to the announced data plane with the access token only', async (t) => {
    const data = await scriptedServer((_req, res) => json(res, 200, { stdout: 'hi\n', stderr: '', exit_code: 0, truncated: true }));
    const control = await scriptedServer((req, res) => {
      if (req.url === '/info') return json(res, 200, { version: '0.1.0', region: 'local', driver: 'x', data_plane_url: `${data.url}/`, sandbox_url: '', preview_url: '' });
      json(res, 201, { ...SANDBOX, access_token: 'sat_secret' });
    });
    t.after(() => Promise.all([data.close(), control.close()]));
    const sb = await Sandbox.create({ apiUrl: control.url, apiKey: KEY, name: 'n', metadata: { a: 'b' } });
    assert.deepEqual(JSON.parse(control.seen[0]?.body ?? ''), { name: 'n', metadata: { a: 'b' } });
    assert.equal(sb.id, SANDBOX.id);
    assert.equal(sb.accessToken, 'sat_secret');
    assert.equal('access_token' in sb.info, false);
    const r = await sb.commands.run('echo hi', { cwd: '/tmp', env: { A: '1' }, timeoutS: 5 });
    assert.deepEqual(r, { stdout: 'hi\n', stderr: '', exitCode: 0, truncated: true });
    const sent = data.seen[0];
    assert.equal(sent?.url, '/exec');
    assert.equal(sent?.headers['x-access-token'], 'sat_secret');
    assert.equal(sent?.headers['x-platform-sandbox-id'], SANDBOX.id);
    assert.equal(sent?.headers['x-api-key'], undefined);
    assert.deepEqual(JSON.parse(sent?.body ?? ''), { command: 'echo hi', env: { A: '1' }, working_dir: '/tmp', timeout_s: 5 });
  });

  it('list follows cursors and sends the filters', async (t) => {
    const srv = await scriptedServer((req, res) => {
      const q = new URL(req.url, 'http://x').searchParams;
      if (!q.has('cursor')) return json(res, 200, { sandboxes: [SANDBOX], next_cursor: 'c1' });
      json(res, 200, { sandboxes: [{ ...SANDBOX, id: 'other' }] });
    });
    t.after(() => srv.close());
    const ids = [];
    for await (const page of Sandbox.list({ apiUrl: srv.url, apiKey: KEY, status: ['active', 'paused'], metadata: { team: 'a b' }, limit: 1 })) {
      ids.push(page.map((s) => s.id));
    }
    assert.deepEqual(ids, [[SANDBOX.id], ['other']]);
    const q = new URL(srv.seen[1]?.url ?? '', 'http://x').searchParams;
    assert.equal(q.get('status'), 'active,paused');
    assert.equal(q.get('metadata.team'), 'a b');
    assert.equal(q.get('limit'), '1');
    assert.equal(q.get('cursor'), 'c1');
  });
});
