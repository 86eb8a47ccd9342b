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

// gVisor cannot save a TCP endpoint on the sandbox's NIC, and this runsc ends the sandbox when a save fails:
// a capture must close the platform's own connections first and refuse (409) what only the host can see.
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
function preview(id: string, port: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: srv.port, path: '/', headers: { host: `${port}-${id}.preview.localhost:${srv.port}` } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
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
  assert.equal((await api.post(`/sandboxes/${sb.id}/preview-ports`, { port: 3000 })).status, 201);
  const deadline = Date.now() + 30_000;
  while ((await preview(sb.id, 3000).catch(() => ({ status: 0 }))).status !== 200) {
    assert.ok(Date.now() < deadline, 'the preview server came up');
    await new Promise((r) => setTimeout(r, 200));
  }
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

test('a connection the sandbox just closed over its NIC: pause and snapshot answer 409 with when to retry, and the sandbox keeps working', async () => {
  const sb = (await api.post('/sandboxes', {})).body;
  // curl closes first, so gVisor's netstack keeps the endpoint in TIME_WAIT; its /proc/net/tcp does not list it.
  const got = await exec(sb.id, "curl -s -o /dev/null -w '%{http_code}' http://www.example.test/ && grep -c ' 01 \\| 06 ' /proc/net/tcp || true");
  assert.match(got.stdout, /^200/);

  for (const path of ['pause', 'snapshot']) {
    const res = await api.post(`/sandboxes/${sb.id}/${path}`, path === 'snapshot' ? {} : undefined);
    assert.equal(res.status, 409, `${path}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, 'conflict');
    const m = /retry in (\d+) s/.exec(res.body.error.message);
    assert.ok(m, res.body.error.message);
    const retryAfter = Number(res.headers.get('retry-after'));
    assert.equal(retryAfter, Number(m[1]));
    assert.ok(retryAfter > 2 && retryAfter <= 61, `retry-after ${retryAfter}`);
  }
  assert.equal((await api.get(`/sandboxes/${sb.id}`)).body.status, 'active');
  assert.equal((await exec(sb.id, 'echo still here')).stdout, 'still here\n');
  assert.equal((await api.get(`/snapshots?sandbox_id=${sb.id}`)).body.snapshots.length, 0, 'no snapshot row is left of the refused capture');
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

test('a snapshot whose save ends the sandbox (a connection over its own address, which the host never sees) records it failed, never active', async () => {
  const sb = (await api.post('/sandboxes', {})).body;
  const ip = (await exec(sb.id, "ip -4 -o addr show | awk '{print $4}' | cut -d/ -f1 | grep -v '^127\\.'")).stdout.trim();
  await exec(sb.id, `python3 -c "import socket; s=socket.socket(); s.bind(('${ip}', 7000)); s.listen(); c=socket.create_connection(('${ip}', 7000)); a, _ = s.accept(); c.close(); a.close()"`);
  const res = await api.post(`/sandboxes/${sb.id}/snapshot`, {});
  const status = (await api.get(`/sandboxes/${sb.id}`)).body.status;
  if (res.status === 201) assert.equal(status, 'active');
  else {
    assert.equal(res.status, 500, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'internal');
    assert.equal(status, 'failed');
  }
  assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
});
