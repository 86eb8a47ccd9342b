import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Api, parseSse, ServerProcess } from './helpers/server-process.ts';

/** Every driver this host offers runs the same exec contract. */
for (const driver of ['container', 'gvisor'] as const)
  describe(`exec on the ${driver} driver`, () => {
    let server: ServerProcess;
    let api: Api;
    let sb: any;

    before(async () => {
      server = await ServerProcess.start({ SANDPIT_DRIVER: driver });
      api = new Api(server.url, server.key);
      const res = await api.post('/sandboxes', { env: { FROM_CREATE: 'yes', SHARED: 'sandbox' } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      sb = res.body;
    });
    after(async () => {
      await server?.stop();
    });

    const exec = (body: unknown) => api.post(`/sandboxes/${sb.id}/exec`, body);
    const dataPlane = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      new Api(server.url).post(path, body, { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.access_token, ...headers });

    describe('control-plane exec', () => {
      test('runs through /bin/sh -c as user in /home/user with the sandbox env', async () => {
        const res = await exec({ command: 'echo "$FROM_CREATE $(id -un) $(pwd) $HOME"; echo oops >&2; exit 3' });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { stdout: 'yes user /home/user /home/user\n', stderr: 'oops\n', exit_code: 3 });
      });

      test('args run the binary without a shell; env and working_dir apply', async () => {
        const res = await exec({ command: '/bin/echo', args: ['$SHARED', 'a b'], env: { SHARED: 'exec' } });
        assert.equal(res.body.stdout, '$SHARED a b\n');
        const env = await exec({ command: 'echo $SHARED; pwd', env: { SHARED: 'exec' }, working_dir: '/tmp' });
        assert.equal(env.body.stdout, 'exec\n/tmp\n');
      });

      test('commands start with SIGPIPE at its default: a writer to a closed pipe ends quietly', async () => {
        // With SIGPIPE ignored, `yes` would see EPIPE and complain on stderr.
        const pipe = await exec({ command: 'yes | head -1' });
        assert.deepEqual([pipe.body.stdout, pipe.body.stderr, pipe.body.exit_code], ['y\n', '', 0]);
        const mask = await exec({ command: 'python3 -c "import signal; print(sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))"' });
        assert.equal(mask.body.stdout, '[]\n', 'no signal is blocked');
      });

      test('the sandbox is a Debian machine with the base template tools', async () => {
        const res = await exec({
          command: 'python3 --version && node --version && npm --version >/dev/null && git --version >/dev/null && curl --version >/dev/null && gcc --version >/dev/null && echo ok',
        });
        assert.equal(res.body.exit_code, 0, res.body.stderr);
        assert.match(res.body.stdout, /^Python 3\.\d+\.\d+\nv22\.\d+\.\d+\nok\n$/);
      });

      test('everyday file tools work: ls -l, stat, du, cp -a (gVisor needs the statx shim for coreutils)', async () => {
        const res = await exec({ command: 'printf hello > f && ls -l f && stat -c "%s %U %A" f && cp -a f g && du -b g && ls -la /home/user | head -1' });
        assert.equal(res.body.exit_code, 0, res.body.stderr);
        assert.match(res.body.stdout, /^-rw-r--r-- 1 user user 5 .* f\n5 user -rw-r--r--\n5\tg\ntotal \d+\n$/);
        assert.equal(res.body.stderr, '', 'the preloaded shim loads without complaint');
      });

      test('a missing binary or working_dir is a non-zero result, not a crash', async () => {
        const missing = await exec({ command: '/no/such/binary', args: [] });
        assert.equal(missing.status, 200);
        assert.equal(missing.body.exit_code, 127);
        assert.match(missing.body.stderr, /sandpit:/);
        const badDir = await exec({ command: 'true', working_dir: '/no/such/dir' });
        assert.notEqual(badDir.body.exit_code, 0);
        assert.match(badDir.body.stderr, /sandpit:/);
      });

      test('timeout kills the whole process group and reports exit 124', async () => {
        const started = Date.now();
        const res = await exec({ command: 'sleep 300 & echo $! > /tmp/child; sleep 300', timeout_s: 1 });
        assert.ok(Date.now() - started < 10_000);
        assert.equal(res.body.exit_code, 124);
        assert.match(res.body.stderr, /timed out after 1 s/);
        const child = (await exec({ command: 'cat /tmp/child' })).body.stdout.trim();
        const alive = await exec({ command: `kill -0 ${child} 2>/dev/null && echo alive || echo gone` });
        assert.equal(alive.body.stdout, 'gone\n');
      });

      test('invalid UTF-8 becomes U+FFFD', async () => {
        const res = await exec({ command: "printf 'a\\377b\\n'" });
        assert.equal(res.body.stdout, 'a\uFFFDb\n');
      });

      test('bad exec bodies are 400', async () => {
        for (const body of [{}, { command: '' }, { command: 'true', timeout_s: 0 }, { command: 'true', timeout_s: 'x' }, { command: 'true', extra: 1 }, { command: 'true', args: 'x' }]) {
          const res = await exec(body);
          assert.equal(res.status, 400, JSON.stringify(body));
          assert.equal(res.body.error.code, 'bad_request');
        }
      });
    });

    describe('data-plane exec', () => {
      test('routed by X-Platform-Sandbox-Id with X-Access-Token', async () => {
        const res = await dataPlane('/exec', { command: 'echo hi' });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { stdout: 'hi\n', stderr: '', exit_code: 0 });
      });

      test('routed by the per-sandbox host name', async () => {
        // fetch() does not let a caller set Host, so this one goes through node:http.
        const body = JSON.stringify({ command: 'echo host' });
        const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = request(
            `${server.url}/exec`,
            { method: 'POST', headers: { host: `${sb.id}.sandbox.localhost:${server.port}`, 'x-access-token': sb.access_token, 'content-type': 'application/json' } },
            (r) => {
              let text = '';
              r.on('data', (d) => (text += d));
              r.on('end', () => resolve({ status: r.statusCode ?? 0, text }));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(JSON.parse(res.text).stdout, 'host\n');
      });

      test("wrong token, another sandbox's token, missing headers", async () => {
        assert.equal((await dataPlane('/exec', { command: 'true' }, { 'x-access-token': 'wrong' })).status, 401);
        const other = (await api.post('/sandboxes', {})).body;
        try {
          const res = await dataPlane('/exec', { command: 'true' }, { 'x-access-token': other.access_token });
          assert.equal(res.status, 401);
          assert.equal(res.body.error.code, 'unauthorized');
        } finally {
          await api.del(`/sandboxes/${other.id}`);
        }
        const noId = await new Api(server.url).post('/exec', { command: 'true' }, { 'x-access-token': sb.access_token });
        assert.equal(noId.status, 400);
        const noToken = await new Api(server.url).post('/exec', { command: 'true' }, { 'x-platform-sandbox-id': sb.id });
        assert.equal(noToken.status, 401);
        // The team key is not a data-plane credential.
        const teamKey = await new Api(server.url).post('/exec', { command: 'true' }, { 'x-platform-sandbox-id': sb.id, 'x-api-key': server.key });
        assert.equal(teamKey.status, 401);
      });

      test('output beyond 8 MiB is truncated with a notice; the control plane omits the flag', async () => {
        const cmd = 'head -c 9437184 /dev/zero | tr "\\0" a';
        const res = await dataPlane('/exec', { command: cmd, timeout_s: 60 });
        assert.equal(res.status, 200);
        assert.equal(res.body.truncated, true);
        assert.equal(res.body.stdout.length, 8 * 1024 * 1024);
        assert.match(res.body.stderr, /truncated/);
        const small = await dataPlane('/exec', { command: 'echo small' });
        assert.ok(!('truncated' in small.body));
        const control = await exec({ command: cmd, timeout_s: 60 });
        assert.ok(!('truncated' in control.body));
        assert.equal(control.body.stdout.length, 8 * 1024 * 1024);
      });
    });

    describe('exec stream', () => {
      test('SSE: data events with chunks, a final finished event with the exit code', async () => {
        const res = await fetch(`${server.url}/sandboxes/${sb.id}/exec/stream`, {
          method: 'POST',
          headers: { 'x-api-key': server.key, 'content-type': 'application/json' },
          body: JSON.stringify({ command: 'echo one; sleep 0.2; echo two >&2; exit 7' }),
        });
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
        const { events, stray } = parseSse(await res.text());
        assert.deepEqual(stray, []);
        const last = events.at(-1);
        assert.equal(last.finished, true);
        assert.equal(last.exit_code, 7);
        assert.ok(!('error' in last));
        assert.equal(events.filter((e) => e.finished).length, 1);
        assert.equal(events.map((e) => e.stdout ?? '').join(''), 'one\n');
        assert.equal(events.map((e) => e.stderr ?? '').join(''), 'two\n');
        for (const e of events) assert.ok(!Number.isNaN(Date.parse(e.timestamp)));
      });

      test('data-plane stream; errors before streaming use the envelope', async () => {
        const res = await fetch(`${server.url}/exec/stream`, {
          method: 'POST',
          headers: { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.access_token, 'content-type': 'application/json' },
          body: JSON.stringify({ command: 'printf abc' }),
        });
        const { events } = parseSse(await res.text());
        assert.equal(events.map((e) => e.stdout ?? '').join(''), 'abc');
        const bad = await fetch(`${server.url}/exec/stream`, {
          method: 'POST',
          headers: { 'x-platform-sandbox-id': sb.id, 'x-access-token': 'nope', 'content-type': 'application/json' },
          body: JSON.stringify({ command: 'true' }),
        });
        assert.equal(bad.status, 401);
        assert.equal((await bad.json()).error.code, 'unauthorized');
      });

      test('a timed-out stream ends with exit 124 and an error', async () => {
        const res = await fetch(`${server.url}/sandboxes/${sb.id}/exec/stream`, {
          method: 'POST',
          headers: { 'x-api-key': server.key, 'content-type': 'application/json' },
          body: JSON.stringify({ command: 'sleep 30', timeout_s: 1 }),
        });
        const last = parseSse(await res.text()).events.at(-1);
        assert.equal(last.finished, true);
        assert.equal(last.exit_code, 124);
        assert.match(last.error, /timed out/);
      });

      test('keepalive comment frames arrive every 15 s', { skip: driver !== 'container' && 'driver-independent; checked once' }, async () => {
        const res = await fetch(`${server.url}/sandboxes/${sb.id}/exec/stream`, {
          method: 'POST',
          headers: { 'x-api-key': server.key, 'content-type': 'application/json' },
          body: JSON.stringify({ command: 'sleep 16; echo done' }),
        });
        const text = await res.text();
        assert.match(text, /\n?: keepalive\n\n/);
        const { events } = parseSse(text);
        assert.equal(events.at(-1).exit_code, 0);
      });
    });

    describe('exec and pause', () => {
      test('exec on a paused sandbox auto-resumes it; processes and files survive pause', async () => {
        await exec({
          command: "echo kept > /home/user/file; nohup sh -c 'i=0; while true; do i=$((i+1)); echo $i > /tmp/counter.new && mv /tmp/counter.new /tmp/counter; sleep 0.1; done' >/dev/null 2>&1 &",
        });
        await new Promise((r) => setTimeout(r, 500));
        assert.equal((await api.post(`/sandboxes/${sb.id}/pause`)).status, 200);
        const res = await exec({ command: 'cat /home/user/file; c1=$(cat /tmp/counter); sleep 0.5; c2=$(cat /tmp/counter); [ "$c2" -gt "$c1" ] && echo counting' });
        assert.equal(res.body.stdout, 'kept\ncounting\n');
        assert.equal((await api.get(`/sandboxes/${sb.id}`)).body.status, 'active');
      });
    });
  });
