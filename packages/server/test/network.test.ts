import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Internet } from './helpers/internet.ts';
import { Api, ServerProcess } from './helpers/server-process.ts';

let dir: string;
let inet: Internet;
let server: ServerProcess;
let api: Api;
let installation: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-net-'));
  inet = await Internet.start(dir);
  // The container driver: pause must work with open TCP sockets (gVisor's checkpoint refuses them).
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_DNS_UPSTREAM: `${inet.dns}:53`, SANDPIT_EGRESS_UPSTREAM_CA: inet.caFile });
  installation = createHash('sha256')
    .update(await realpath(server.dataDir))
    .digest('hex')
    .slice(0, 8);
  api = new Api(server.url, server.key);
});

after(async () => {
  await server?.stop();
  inet?.stop();
  await rm(dir, { recursive: true, force: true });
  // A server that stops with no sandboxes leaves no namespace, veth or table behind.
  const links = spawnSync('ip', ['-d', 'link', 'show'], { encoding: 'utf8' }).stdout;
  assert.ok(!links.includes(`sandpit:${installation}`), 'veths left behind');
  assert.ok(!spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.includes(`sandpit-${installation}-`), 'namespaces left behind');
  assert.ok(!spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' }).stdout.includes(`sandpit_${installation}`), 'nft table left behind');
});

function envelope(res: { status: number; body: any }, status: number, code?: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(typeof res.body?.error?.message, 'string');
  if (code) assert.equal(res.body.error.code, code);
}

async function create(body: unknown = {}) {
  const res = await api.post('/sandboxes', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string; access_token: string; secrets: { env: string; secret: string; revoked: boolean }[]; network?: unknown };
}

async function sh(id: string, command: string, timeout_s = 20): Promise<{ stdout: string; stderr: string; exit_code: number }> {
  const res = await api.post(`/sandboxes/${id}/exec`, { command, timeout_s });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** curl from inside the sandbox; returns the HTTP status and body, or status 0 when the connection failed. */
async function curl(id: string, url: string, extra = ''): Promise<{ status: number; body: any }> {
  const r = await sh(id, `curl -sS -m 4 -o /tmp/body -w '%{http_code}' ${extra} '${url}'; echo; cat /tmp/body 2>/dev/null; rm -f /tmp/body`);
  const [code, ...rest] = r.stdout.split('\n');
  const text = rest.join('\n');
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return { status: Number(code) || 0, body };
}

describe('secrets API', () => {
  test('create, list without values, duplicate, revoke, re-create', async () => {
    const made = await api.post('/secrets', { name: 'api-key', value: 'v1-real', allowed_hosts: ['api.example.test'] });
    assert.equal(made.status, 201);
    assert.equal(made.headers.get('cache-control'), 'no-store');
    assert.deepEqual(Object.keys(made.body).sort(), ['allowed_hosts', 'created_at', 'name']);
    envelope(await api.post('/secrets', { name: 'api-key', value: 'x' }), 409, 'conflict');
    const list = await api.get('/secrets');
    assert.equal(list.status, 200);
    assert.ok(!JSON.stringify(list.body).includes('v1-real'));
    assert.equal(list.headers.get('cache-control'), 'no-store');
    assert.equal((await api.del('/secrets/api-key')).status, 204);
    envelope(await api.del('/secrets/api-key'), 404, 'not_found');
    assert.equal((await api.post('/secrets', { name: 'api-key', value: 'v2-real' })).status, 201);
    assert.equal((await api.del('/secrets/api-key')).status, 204);
  });

  test('bad input is refused and changes nothing', async () => {
    envelope(await api.post('/secrets', { name: 'bad name', value: 'x' }), 400);
    envelope(await api.post('/secrets', { name: 'n', value: '' }), 400);
    envelope(await api.post('/secrets', { name: 'n', value: 'a\nb' }), 400);
    envelope(await api.post('/secrets', { name: 'n', value: 'x', allowed_hosts: ['not a host'] }), 400);
    envelope(await api.post('/sandboxes', { secrets: { TOKEN: 'no-such-secret' } }), 404, 'not_found');
    await api.post('/secrets', { name: 'gone', value: 'x' });
    await api.del('/secrets/gone');
    envelope(await api.post('/sandboxes', { secrets: { TOKEN: 'gone' } }), 409, 'conflict');
    await api.post('/secrets', { name: 'ok', value: 'x' });
    envelope(await api.post('/sandboxes', { secrets: { PATH: 'ok' } }), 400, 'bad_request');
    envelope(await api.post('/sandboxes', { secrets: { SSL_CERT_FILE: 'ok' } }), 400, 'bad_request');
    envelope(await api.post('/sandboxes', { env: { TOKEN: 'a' }, secrets: { TOKEN: 'ok' } }), 400, 'bad_request');
    envelope(await api.post('/sandboxes', { network: { deny_out: ['example.test'] } }), 400, 'bad_request');
    envelope(await api.post('/sandboxes', { network: { allow_out: ['10.0.0.0/33'] } }), 400, 'bad_request');
    assert.equal((await api.get('/sandboxes')).body.sandboxes.length, 0);
  });
});

describe('egress', () => {
  test('secrets are swapped at egress (HTTP and HTTPS); the sandbox sees only a token', async () => {
    await api.post('/secrets', { name: 'gh', value: 'REAL-gh-value-1' });
    const sb = await create({ secrets: { GH_TOKEN: 'gh' } });
    assert.deepEqual(sb.secrets, [{ env: 'GH_TOKEN', secret: 'gh', revoked: false }]);
    const env = await sh(sb.id, 'env; cat /proc/1/environ | tr "\\0" "\\n"');
    assert.match(env.stdout, /GH_TOKEN=sandpit-proxy-token-/);
    assert.ok(!env.stdout.includes('REAL-gh-value-1'));
    for (const scheme of ['http', 'https']) {
      const r = await curl(sb.id, `${scheme}://api.example.test/echo`, '-H "Authorization: Bearer $GH_TOKEN"');
      assert.equal(r.status, 200, JSON.stringify(r));
      assert.equal(r.body.headers.authorization, 'Bearer REAL-gh-value-1');
    }
    // Python and Node trust the egress CA through the variables the platform sets.
    const py = await sh(
      sb.id,
      `python3 -c "import urllib.request,os; r=urllib.request.Request('https://api.example.test/p', headers={'X-Key': os.environ['GH_TOKEN']}); print(urllib.request.urlopen(r).read().decode())"`,
    );
    assert.equal(JSON.parse(py.stdout).headers['x-key'], 'REAL-gh-value-1', py.stderr);
    const node = await sh(sb.id, `node -e "fetch('https://api.example.test/n',{headers:{'x-key':process.env.GH_TOKEN}}).then(r=>r.text()).then(console.log)"`);
    assert.equal(JSON.parse(node.stdout).headers['x-key'], 'REAL-gh-value-1', node.stderr);

    // Revocation: the proxy refuses the token with a JSON 403; the binding shows revoked.
    assert.equal((await api.del('/secrets/gh')).status, 204);
    const refused = await curl(sb.id, 'https://api.example.test/echo', '-H "Authorization: Bearer $GH_TOKEN"');
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'secret_revoked');
    assert.equal((await api.get(`/sandboxes/${sb.id}`)).body.secrets[0].revoked, true);
    // Re-creating the name does not revive the old binding.
    await api.post('/secrets', { name: 'gh', value: 'REAL-gh-value-2' });
    assert.equal((await api.get(`/sandboxes/${sb.id}`)).body.secrets[0].revoked, true);
    assert.equal((await curl(sb.id, 'http://api.example.test/echo', '-H "Authorization: Bearer $GH_TOKEN"')).status, 403);
    assert.ok(!server.output.includes('REAL-gh-value'), 'a secret value reached the log');
    await api.del(`/sandboxes/${sb.id}`);
  });

  test('secrets limited to hosts are not sent elsewhere', async () => {
    await api.post('/secrets', { name: 'scoped', value: 'REAL-scoped', allowed_hosts: ['api.example.test'] });
    const sb = await create({ secrets: { S: 'scoped' } });
    assert.equal((await curl(sb.id, 'http://api.example.test/', '-H "X-S: $S"')).body.headers['x-s'], 'REAL-scoped');
    const other = await curl(sb.id, 'http://www.example.test/', '-H "X-S: $S"');
    assert.equal(other.status, 403);
    assert.equal(other.body.error.code, 'secret_host_not_allowed');
    await api.del(`/sandboxes/${sb.id}`);
  });

  test('allow list with a domain, a wildcard and a CIDR; everything else denied', async () => {
    const sb = await create({ network: { allow_out: ['api.example.test', `${inet.names['other.test']}/32`] } });
    assert.equal((await curl(sb.id, 'https://api.example.test/')).status, 200);
    assert.equal((await curl(sb.id, 'http://api.example.test/')).status, 200);
    assert.equal((await curl(sb.id, `http://${inet.names['other.test']}/`)).status, 200);
    assert.equal((await curl(sb.id, 'http://www.example.test/')).status, 0, 'not allowed: does not resolve');
    // Dialling an allowed name's neighbour by address with a forged Host/SNI is refused too.
    assert.equal((await curl(sb.id, 'http://api.example.test/', `--resolve api.example.test:80:${inet.names['www.example.test']}`)).body.error.code, 'egress_denied');
    assert.equal((await curl(sb.id, 'https://api.example.test/', `--resolve api.example.test:443:${inet.names['evil.test']}`)).status, 0);
    assert.equal((await curl(sb.id, `http://${inet.names['evil.test']}/`)).body.error.code, 'egress_denied');

    const patched = await api.patch(`/sandboxes/${sb.id}`, { network: { allow_out: ['*.example.test'] } });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.network, { allow_out: ['*.example.test'] });
    assert.equal((await curl(sb.id, 'https://www.example.test/')).status, 200);
    assert.equal((await curl(sb.id, 'http://deep.sub.example.test/')).status, 200);
    assert.equal((await curl(sb.id, 'http://example.test/')).status, 0, 'the wildcard does not match the apex');
    assert.equal((await curl(sb.id, `http://${inet.names['other.test']}/`)).body.error.code, 'egress_denied');
    await api.del(`/sandboxes/${sb.id}`);
  });

  test('deny list, always-blocked ranges, other sandboxes and the host are unreachable', async () => {
    const a = await create({ network: { deny_out: [`${inet.names['other.test']}/32`] } });
    const b = await create();
    assert.equal((await curl(a.id, 'http://api.example.test/')).status, 200);
    assert.equal((await curl(a.id, 'http://other.test/')).status, 0);
    // Always blocked, even when allowed: the sandbox's packets are dropped on the host, never routed.
    const blocked = await create({ network: { allow_out: ['10.0.0.0/8', '0.0.0.0/0'] } });
    assert.equal((await curl(blocked.id, 'http://10.1.2.3/', '--connect-timeout 1')).status, 0);
    assert.equal((await curl(blocked.id, 'http://api.example.test/')).status, 200);
    // Sandbox to sandbox.
    await sh(b.id, 'setsid python3 -m http.server 8080 --bind 0.0.0.0 >/dev/null 2>&1 < /dev/null & sleep 0.5');
    const bIp = (await sh(b.id, "ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1")).stdout.trim();
    assert.equal((await curl(b.id, 'http://127.0.0.1:8080/')).status, 200);
    assert.equal((await curl(a.id, `http://${bIp}:8080/`, '--connect-timeout 1')).status, 0);
    // The host: its side of the veth (API port) and its loopback.
    const gw = (await sh(a.id, "ip route | awk '/default/ {print $3}'")).stdout.trim();
    assert.equal((await curl(a.id, `http://${gw}:${server.port}/info`, '--connect-timeout 1')).status, 0);
    assert.equal((await curl(a.id, `http://127.0.0.1:${server.port}/info`, '--connect-timeout 1')).status, 0);
    for (const s of [a, b, blocked]) await api.del(`/sandboxes/${s.id}`);
  });

  test('PATCH applies at once and cuts existing connections; paused sandboxes answer 409', async () => {
    const sb = await create();
    // A connection held open to other.test (the client waits for the server), reporting when it is closed.
    await sh(
      sb.id,
      `setsid python3 -c "
import socket,time
s=socket.create_connection(('other.test',80))
open('/tmp/held','w').write('open')
d=s.recv(100)
open('/tmp/held','w').write('closed')
" >/dev/null 2>&1 < /dev/null & sleep 1`,
    );
    assert.equal((await sh(sb.id, 'cat /tmp/held')).stdout, 'open');
    const res = await api.patch(`/sandboxes/${sb.id}`, { network: { deny_out: [`${inet.names['other.test']}/32`] } });
    assert.equal(res.status, 200);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await sh(sb.id, 'cat /tmp/held')).stdout, 'closed');
    assert.equal((await curl(sb.id, 'http://other.test/')).status, 0);
    assert.equal((await curl(sb.id, 'http://api.example.test/')).status, 200);
    // Rules survive pause/resume; PATCH of network while paused is 409.
    assert.equal((await api.post(`/sandboxes/${sb.id}/pause`)).status, 200);
    envelope(await api.patch(`/sandboxes/${sb.id}`, { network: null }), 409, 'conflict');
    assert.equal((await api.post(`/sandboxes/${sb.id}/resume`)).status, 200);
    assert.equal((await curl(sb.id, 'http://other.test/')).status, 0);
    // Back to defaults: network absent.
    const reset = await api.patch(`/sandboxes/${sb.id}`, { network: null });
    assert.equal(reset.body.network, undefined);
    assert.equal((await curl(sb.id, 'http://other.test/')).status, 200);
    await api.del(`/sandboxes/${sb.id}`);
  });

  test('rules, secrets and the quickack route survive a server crash; orphans are removed', async () => {
    await api.post('/secrets', { name: 'crash', value: 'REAL-crash' });
    const sb = await create({ network: { deny_out: [`${inet.names['other.test']}/32`] }, secrets: { C: 'crash' } });
    const ip = (await sh(sb.id, "ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1")).stdout.trim();
    await server.kill9();
    // A namespace and veth left by a crash mid-create, named for this installation.
    spawnSync('ip', ['netns', 'add', `sandpit-${installation}-4000`]);
    // As a slot made by a version before the quickack route: the restart gives it one.
    assert.equal(spawnSync('ip', ['route', 'del', `${ip}/32`]).status, 0);
    await server.launch();
    assert.match(spawnSync('ip', ['-4', 'route', 'show', `${ip}/32`], { encoding: 'utf8' }).stdout, /quickack 1/);
    assert.equal((await curl(sb.id, 'http://other.test/')).status, 0);
    assert.equal((await curl(sb.id, 'http://api.example.test/', '-H "X-C: $C"')).body.headers['x-c'], 'REAL-crash');
    assert.ok(!spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.includes(`sandpit-${installation}-4000`));
    await api.del(`/sandboxes/${sb.id}`);
  });
});

/** A request to the preview host of a sandbox port, over the API listener. */
function preview(id: string, port: number, path = '/', headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, headers: { host: `${port}-${id}.preview.localhost:${server.port}`, ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let body: any = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Plain text.
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('preview ports', () => {
  test("the host's route to a sandbox acknowledges at once (quickack): a reply written in two parts is not held by delayed ACKs", async () => {
    const sb = await create();
    const ip = (await sh(sb.id, "ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1")).stdout.trim();
    assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/);
    const route = spawnSync('ip', ['-4', 'route', 'show', `${ip}/32`], { encoding: 'utf8' }).stdout;
    assert.match(route, /quickack 1/, route);
    await api.del(`/sandboxes/${sb.id}`);
  });

  test('publish, strict routing, private access, WebSocket, auto-resume', async () => {
    const sb = await create();
    // An HTTP server that also answers WebSocket-style upgrades by echoing bytes.
    await sh(
      sb.id,
      `cat > /tmp/srv.js <<'JS'
const http = require('http');
for (const port of [3000, 3001]) {
  const s = http.createServer((req, res) => res.end('hello from ' + port + ' ' + req.url));
  // A pause cuts upgraded connections (a reset, as after a VM pause): a real server survives that.
  s.on('upgrade', (req, sock) => { sock.on('error', () => {}); sock.write('HTTP/1.1 101 Switching Protocols\\r\\nupgrade: websocket\\r\\nconnection: upgrade\\r\\n\\r\\n'); sock.pipe(sock); });
  s.listen(port, '0.0.0.0');
}
JS
setsid node /tmp/srv.js >/dev/null 2>&1 < /dev/null & sleep 0.7`,
    );
    envelope(await preview(sb.id, 3000), 404, 'not_found');
    const pub = await api.post(`/sandboxes/${sb.id}/preview-ports`, { port: 3000 });
    assert.equal(pub.status, 201, JSON.stringify(pub.body));
    assert.equal(pub.body.access, 'public');
    assert.match(pub.body.url, new RegExp(`^http://3000-${sb.id}\\.preview\\.`));
    const ok = await preview(sb.id, 3000, '/a?b=1');
    assert.equal(ok.status, 200);
    assert.equal(ok.body, 'hello from 3000 /a?b=1');
    envelope(await preview(sb.id, 3001), 404);

    const priv = await api.post(`/sandboxes/${sb.id}/preview-ports`, { port: 3001, access: 'private' });
    assert.equal(priv.status, 201);
    envelope(await preview(sb.id, 3001), 401, 'unauthorized');
    assert.equal((await preview(sb.id, 3001, '/', { 'x-preview-token': priv.body.preview_token })).status, 200);
    assert.equal((await preview(sb.id, 3001, `/?preview_token=${priv.body.preview_token}`)).status, 200);
    assert.equal((await preview(sb.id, 3001, '/', { 'x-access-token': sb.access_token })).status, 200);
    envelope(await preview(sb.id, 3001, '/', { 'x-preview-token': 'spv_wrong' }), 401);

    const list = await api.get(`/sandboxes/${sb.id}/preview-ports`);
    assert.deepEqual(
      list.body.preview_ports.map((p: any) => [p.port, p.access]),
      [
        [3000, 'public'],
        [3001, 'private'],
      ],
    );
    envelope(await api.post(`/sandboxes/${sb.id}/preview-ports`, { port: 70000 }), 400);
    envelope(await api.del(`/sandboxes/${sb.id}/preview-ports/4000`), 404);

    // WebSocket through the preview host.
    const echoed = await new Promise<string>((resolve, reject) => {
      const sock = connect(server.port, '127.0.0.1', () => {
        sock.write(
          `GET /ws HTTP/1.1\r\nHost: 3000-${sb.id}.preview.localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
      let text = '';
      sock.on('data', (d) => {
        text += d;
        if (text.includes('\r\n\r\n') && !text.includes('ping')) sock.write('ping');
        if (text.includes('ping')) {
          sock.destroy();
          resolve(text);
        }
      });
      sock.on('error', reject);
      setTimeout(() => reject(new Error(`no echo: ${text}`)), 5000);
    });
    assert.match(echoed, /^HTTP\/1.1 101/);

    // Preview traffic resumes a paused sandbox.
    assert.equal((await api.post(`/sandboxes/${sb.id}/pause`)).status, 200);
    const resumed = await preview(sb.id, 3000);
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    assert.equal((await api.get(`/sandboxes/${sb.id}`)).body.status, 'active');

    assert.equal((await api.del(`/sandboxes/${sb.id}/preview-ports/3000`)).status, 204);
    envelope(await preview(sb.id, 3000), 404);
    await api.del(`/sandboxes/${sb.id}`);
    envelope(await preview(sb.id, 3001, '/', { 'x-access-token': sb.access_token }), 404);
  });
});
