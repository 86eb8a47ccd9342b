import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connect, type PeerCertificate } from 'node:tls';
import { Sandbox } from 'e2b';
import { Agent, fetch as tlsFetch } from 'undici';
import { freePort, ServerProcess } from './helpers/server-process.ts';

/**
 * A sandbox's ports as E2B's SDK names them, `https://{port}-{id}.{domain}` (SANDPIT_E2B_DOMAIN),
 * answered on the E2B port itself: HTTP and HTTPS on one port, a certificate per host name from the
 * installation's E2B CA; a sandbox that is gone answers as E2B's proxy does.
 */
let server: ServerProcess;
let port: number;
let ca: string;

before(async () => {
  port = await freePort();
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_E2B_PORT: String(port), SANDPIT_E2B_DOMAIN: `localhost:${port}` });
  ca = readFileSync(join(server.dataDir, 'e2b-ca', 'ca.crt'), 'utf8');
  process.env.E2B_API_URL = `http://127.0.0.1:${port}`;
  process.env.E2B_SANDBOX_URL = `http://127.0.0.1:${port}`;
  process.env.E2B_API_KEY = server.key;
});
after(async () => {
  await server?.stop();
});

/** A GET trusting the installation's E2B CA alone. */
async function get(url: string): Promise<{ status: number; body: string }> {
  const dispatcher = new Agent({ connect: { ca } });
  try {
    const res = await tlsFetch(url, { dispatcher });
    return { status: res.status, body: await res.text() };
  } finally {
    await dispatcher.close();
  }
}

/** The certificate the E2B port presents for `servername`. */
function presented(servername: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
      resolve(s.getPeerCertificate());
      s.end();
    });
    s.on('error', reject);
  });
}

test("getHost(port) names a host the E2B port serves over HTTPS and HTTP; a sandbox that is gone answers E2B's 502", async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000 });
  let killed = false;
  try {
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).sandboxDomain, `localhost:${port}`);
    const host = sbx.getHost(8000);
    assert.equal(host, `8000-${sbx.sandboxId}.localhost:${port}`);
    await sbx.commands.run('python3 -m http.server 8000', { background: true });
    let page = await get(`https://${host}/`).catch(() => ({ status: 0, body: '' }));
    for (let i = 0; i < 50 && page.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 200));
      page = await get(`https://${host}/`).catch(() => ({ status: 0, body: '' }));
    }
    assert.equal(page.status, 200);
    assert.match(page.body, /Directory listing/);
    const plain = await fetch(`http://${host}/`);
    assert.equal(plain.status, 200, 'the same port still answers plain HTTP');

    const cert = await presented(host.split(':')[0]!);
    assert.equal(cert.subjectaltname, `DNS:${host.split(':')[0]}`);
    assert.equal(cert.issuer.CN, 'Sandpit E2B CA');
    await assert.rejects(fetch(`https://${host}/`), 'a client that does not trust the installation CA is refused');

    await sbx.kill();
    killed = true;
    const gone = await get(`https://${host}/`);
    assert.equal(gone.status, 502);
    const body = JSON.parse(gone.body) as { code: number; message: string; sandboxId: string };
    assert.deepEqual([body.code, body.message], [502, 'The sandbox was not found']);
    assert.ok(sbx.sandboxId.startsWith(body.sandboxId));
  } finally {
    if (!killed) await sbx.kill();
  }
});
