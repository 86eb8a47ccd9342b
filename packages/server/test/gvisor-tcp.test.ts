import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { savesEpollWatchedSockets } from '../src/runtime/gvisor/engines.ts';
import { gvisorPaths, gvisorSandboxPaths } from '../src/runtime/gvisor/paths.ts';
import { Internet } from './helpers/internet.ts';
import { Api, ServerProcess } from './helpers/server-process.ts';

// A pause or snapshot cuts the sandbox's TCP connections to the outside, as a VM's pause does, and never
// refuses for them: the platform closes its own ends first, every process lives on.
let dir: string;
let inet: Internet;
let srv: ServerProcess;
let api: Api;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-gvisor-tcp-'));
  inet = await Internet.start(dir);
  srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_DNS_UPSTREAM: `${inet.dns}:53`, SANDPIT_EGRESS_UPSTREAM_CA: inet.caFile });
  api = new Api(srv.url, srv.key);
});

after(async () => {
  await srv?.stop();
  inet?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function exec(id: string, command: string): Promise<{ stdout: string; exit_code: number }> {
  const res = await api.post(`/sandboxes/${id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** A kept-alive request to a sandbox port through the preview host (the gateway keeps its upstream socket). */
function preview(id: string, port: number, path = '/'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: srv.port, path, headers: { host: `${port}-${id}.preview.localhost:${srv.port}` } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Publishes the port and waits until the server in the sandbox answers `/` through the gateway with `status`. */
async function publish(id: string, port: number, status: number): Promise<void> {
  assert.equal((await api.post(`/sandboxes/${id}/preview-ports`, { port })).status, 201);
  const deadline = Date.now() + 30_000;
  while ((await preview(id, port).catch(() => ({ status: 0 }))).status !== status) {
    assert.ok(Date.now() < deadline, 'the preview server came up');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A WebSocket-style upgrade through the preview host, held open; resolves once the sandbox's server switched protocols. */
function upgrade(id: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect(srv.port, '127.0.0.1', () => {
      sock.write(`GET /ws HTTP/1.1\r\nHost: ${port}-${id}.preview.localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`);
    });
    sock.once('data', (d) => (String(d).startsWith('HTTP/1.1 101') ? resolve(sock) : reject(new Error(String(d)))));
    sock.once('error', reject);
  });
}

test('a preview through the gateway, then pause at once: the platform closes its own connections, pause works, the preview works again', async () => {
  const sb = (await api.post('/sandboxes', {})).body;
  // A kept-alive HTTP/1.1 server that echoes upgraded connections. Python's: a Node.js server (epoll on a
  // listening socket) cannot be checkpointed by this runsc at all (docs/drivers.md).
  await exec(
    sb.id,
    `cat > /tmp/srv.py <<'PY'
import http.server
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def do_GET(self):
        if self.headers.get('upgrade'):
            self.send_response(101)
            self.send_header('upgrade', 'websocket')
            self.send_header('connection', 'upgrade')
            self.end_headers()
            while (b := self.connection.recv(4096)):
                self.connection.sendall(b)
            self.close_connection = True
            return
        body = ('hello ' + self.path).encode()
        self.send_response(200)
        self.send_header('content-length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.ThreadingHTTPServer(('0.0.0.0', 3000), H).serve_forever()
PY
setsid python3 /tmp/srv.py >/dev/null 2>&1 < /dev/null &`,
  );
  await publish(sb.id, 3000, 200);
  const ws = await upgrade(sb.id, 3000);
  const wsClosed = new Promise((r) => ws.once('close', r));
  ws.on('error', () => undefined);
  assert.equal((await preview(sb.id, 3000)).text, 'hello /');

  const paused = await api.post(`/sandboxes/${sb.id}/pause`);
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  assert.equal(paused.body.status, 'paused');
  await wsClosed;

  const resumed = await api.post(`/sandboxes/${sb.id}/resume`);
  assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
  const again = await preview(sb.id, 3000);
  assert.equal(again.status, 200);
  assert.equal(again.text, 'hello /', 'the server in the sandbox answers the preview after the restore');
  assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
});

test('a request the sandbox has not answered when it is deleted ends with the connection, not a 502: clients read the sandbox as gone', async () => {
  const sb = (await api.post('/sandboxes', {})).body;
  await exec(
    sb.id,
    `cat > /tmp/slow.py <<'PY'
import http.server, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def do_GET(self):
        if self.path == '/slow':
            open('/tmp/asked', 'w').close()
            time.sleep(600)
        self.send_response(204)
        self.end_headers()
http.server.ThreadingHTTPServer(('0.0.0.0', 3001), H).serve_forever()
PY
setsid python3 /tmp/slow.py >/dev/null 2>&1 < /dev/null &`,
  );
  await publish(sb.id, 3001, 204);
  const pending = preview(sb.id, 3001, '/slow');
  while ((await exec(sb.id, 'test -f /tmp/asked; echo $?')).stdout.trim() !== '0') await new Promise((r) => setTimeout(r, 100));
  assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
  await assert.rejects(pending, (err: NodeJS.ErrnoException) => err.code === 'ECONNRESET');
});

/**
 * Starts a python process in the sandbox that holds a TCP connection and reports, every 200 ms, in
 * /tmp/<name>.state whether it still carries data: `ok N` while it does, `cut ...` once it broke
 * (then it reconnects and counts on). `listen`: also serve the connection itself (loopback, own address).
 */
async function holder(id: string, name: string, host: string, port: number, listen: boolean): Promise<string> {
  const script = `import socket, time
def pair():
${
  listen
    ? `    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('${host}', ${port})); s.listen()
    c = socket.create_connection(('${host}', ${port})); a, _ = s.accept()
    return c, lambda: (c.sendall(b'x'), a.recv(1))`
    : `    c = socket.create_connection(('${host}', ${port})); c.sendall(b'GET / HTTP/1.1\\r\\nHost: ${host}\\r\\n')
    c.settimeout(0.05)
    def beat():
        try:
            if c.recv(1) == b'': raise ConnectionResetError('closed by the peer')
        except socket.timeout:
            pass
    return c, beat`
}
c, beat = pair(); n = 0; cuts = 0
while True:
    try:
        beat(); n += 1
    except Exception as e:
        cuts += 1
        try: c, beat = pair()
        except Exception: pass
    open('/tmp/${name}.tmp', 'w').write(f'{n} {cuts}')
    __import__('os').replace('/tmp/${name}.tmp', '/tmp/${name}.state')
    time.sleep(0.2)
`;
  await exec(id, `cat > /tmp/${name}.py <<'PY'\n${script}PY\nsetsid python3 /tmp/${name}.py >/tmp/${name}.log 2>&1 < /dev/null & echo $! > /tmp/${name}.pid`);
  return name;
}

/** `[beats, cuts]` a holder has counted. */
async function beats(id: string, name: string): Promise<[number, number]> {
  const text = (await exec(id, `cat /tmp/${name}.state 2>/dev/null || echo 0 0`)).stdout.trim();
  const [n, cuts] = text.split(' ').map(Number);
  return [n ?? 0, cuts ?? 0];
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('pause and snapshot with every kind of connection open: outbound through the egress proxy, loopback, over its own address, just closed; every process lives on and the sandbox connects again', async () => {
  const sb = (await api.post('/sandboxes', {})).body;
  const ip = (await exec(sb.id, "ip -4 -o addr show | awk '{print $4}' | cut -d/ -f1 | grep -v '^127\\.'")).stdout.trim();
  const held = [await holder(sb.id, 'out', 'www.example.test', 80, false), await holder(sb.id, 'lo', '127.0.0.1', 7001, true), await holder(sb.id, 'own', ip, 7002, true)];
  for (const h of held) await until(`${h} carries data`, async () => (await beats(sb.id, h))[0] >= 3);
  const pids = (await exec(sb.id, 'cat /tmp/out.pid /tmp/lo.pid /tmp/own.pid')).stdout;

  for (const op of ['pause', 'snapshot', 'pause'] as const) {
    // A connection closed just now, which gVisor keeps in TIME_WAIT.
    assert.match((await exec(sb.id, "curl -s -o /dev/null -w '%{http_code}' http://www.example.test/")).stdout, /^200$/);
    const before = await Promise.all(held.map((h) => beats(sb.id, h)));
    if (op === 'pause') {
      const paused = await api.post(`/sandboxes/${sb.id}/pause`);
      assert.equal(paused.status, 200, JSON.stringify(paused.body));
      assert.equal(paused.body.status, 'paused');
      assert.equal((await api.post(`/sandboxes/${sb.id}/resume`)).status, 200);
    } else {
      const snap = await api.post(`/sandboxes/${sb.id}/snapshot`, {});
      assert.equal(snap.status, 201, JSON.stringify(snap.body));
      assert.equal((await api.get(`/sandboxes/${sb.id}`)).body.status, 'active');
    }
    assert.equal((await exec(sb.id, 'for p in $(cat /tmp/out.pid /tmp/lo.pid /tmp/own.pid); do kill -0 $p && echo $p; done')).stdout, pids, `${op}: every holder process lives on`);
    // Beats go on for all; the outbound one was cut (its far end is outside the sandbox) and connected again.
    for (const [i, h] of held.entries()) await until(`${op}: ${h} carries data again`, async () => (await beats(sb.id, h))[0] >= before[i]![0] + 3);
    const [, outCuts] = await beats(sb.id, 'out');
    assert.ok(outCuts > before[0]![1], `${op}: the outbound connection was cut (cuts ${before[0]![1]} -> ${outCuts})`);
    assert.equal((await beats(sb.id, 'lo'))[1], before[1]![1], `${op}: the loopback connection was saved whole`);
  }
  assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
});

test('auto-pause fires on time while a connection is held open', async () => {
  const sb = (await api.post('/sandboxes', { auto_pause_seconds: 3 })).body;
  await holder(sb.id, 'out', 'www.example.test', 80, false);
  await until('the connection carries data', async () => (await beats(sb.id, 'out'))[0] >= 1);
  const created = Date.parse(sb.created_at);
  await until('auto-paused', async () => (await api.get(`/sandboxes/${sb.id}`)).body.status === 'paused');
  const pausedAt = Date.parse((await api.get(`/sandboxes/${sb.id}`)).body.updated_at);
  assert.ok(pausedAt - created < 3000 + 10_000, `paused ${pausedAt - created} ms after create, deadline 3000 ms`);
  assert.equal((await api.post(`/sandboxes/${sb.id}/resume`)).status, 200);
  await until('the process connects again after resume', async () => (await beats(sb.id, 'out'))[1] >= 1);
  assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
});

test("an event-loop server (epoll on a TCP socket): Debian 12's runsc refuses with 409 and the sandbox keeps working; Debian 13's pauses it and it serves again after resume", async () => {
  const sb = (await api.post('/sandboxes', {})).body;
  await exec(sb.id, `setsid node -e "require('http').createServer((q, s) => s.end('hi')).listen(3000, '127.0.0.1')" >/dev/null 2>&1 < /dev/null & echo $! > /tmp/node.pid`);
  const deadline = Date.now() + 30_000;
  while (!(await exec(sb.id, 'cat /proc/net/tcp')).stdout.includes(':0BB8 00000000:0000 0A')) {
    assert.ok(Date.now() < deadline, 'the server listens');
    await new Promise((r) => setTimeout(r, 200));
  }
  // Which build runs it: the sandbox's meta records the engine (absent or 20221219: Debian 12's).
  const meta = JSON.parse(await readFile(gvisorSandboxPaths(gvisorPaths(srv.dataDir), sb.id.replace(/^sb-[a-z0-9]+-/, '')).meta, 'utf8'));
  if (savesEpollWatchedSockets(meta.engine)) {
    const paused = await api.post(`/sandboxes/${sb.id}/pause`);
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.equal((await api.post(`/sandboxes/${sb.id}/resume`)).status, 200);
    assert.equal((await exec(sb.id, 'curl -s http://127.0.0.1:3000/')).stdout, 'hi');
  } else {
    const refused = await api.post(`/sandboxes/${sb.id}/pause`);
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.match(refused.body.error.message, /\(node\) in the sandbox watches TCP sockets with epoll/);
    assert.equal((await api.get(`/sandboxes/${sb.id}`)).body.status, 'active');
    assert.equal((await exec(sb.id, 'echo still here')).stdout, 'still here\n');
    await exec(sb.id, 'kill $(cat /tmp/node.pid); while kill -0 $(cat /tmp/node.pid) 2>/dev/null; do sleep 0.05; done');
    const paused = await api.post(`/sandboxes/${sb.id}/pause`);
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.equal((await api.post(`/sandboxes/${sb.id}/resume`)).status, 200);
  }
  assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
});
