import { type ChildProcess, spawn } from 'node:child_process';
import { createPrivateKey, randomBytes, sign, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../../src/runtime/host/run-command.ts';
import { freePort } from './server-process.ts';

/** Debian's docker-registry on a loopback port with its own config and storage (never the system service). */
export class TestRegistry {
  readonly dir: string;
  readonly port: number;
  readonly child: ChildProcess;
  tokenServer: Server | undefined;
  output = '';

  private constructor(dir: string, port: number, child: ChildProcess) {
    this.dir = dir;
    this.port = port;
    this.child = child;
    child.stdout?.on('data', (d) => (this.output += d));
    child.stderr?.on('data', (d) => (this.output += d));
  }

  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  get storage(): string {
    return join(this.dir, 'storage');
  }

  /**
   * With `auth`, every request needs credentials: basic (htpasswd), or with `token` bearer tokens
   * from a token service of ours on loopback, as Docker Hub and GHCR do it (anonymous clients get
   * a token that grants nothing).
   */
  static async start(auth?: { username: string; password: string; token?: boolean }): Promise<TestRegistry> {
    const dir = await mkdtemp(join(tmpdir(), 'sandpit-registry-'));
    const port = await freePort();
    let authConfig = '';
    let tokenServer: Server | undefined;
    if (auth?.token) {
      const started = await startTokenServer(dir, auth);
      tokenServer = started.server;
      authConfig = `auth:\n  token:\n    realm: ${started.realm}\n    service: ${TOKEN_SERVICE}\n    issuer: ${TOKEN_ISSUER}\n    rootcertbundle: ${join(dir, 'token-cert.pem')}\n`;
    } else if (auth) {
      const { stdout } = await runCommand('htpasswd', ['-Bbn', auth.username, auth.password]);
      await writeFile(join(dir, 'htpasswd'), stdout);
      authConfig = `auth:\n  htpasswd:\n    realm: sandpit-test\n    path: ${join(dir, 'htpasswd')}\n`;
    }
    const config = [
      'version: 0.1',
      'log:',
      '  level: error',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'storage')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: 127.0.0.1:${port}`,
      authConfig,
    ].join('\n');
    await writeFile(join(dir, 'config.yml'), config);
    const child = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
    const r = new TestRegistry(dir, port, child);
    r.tokenServer = tokenServer;
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`docker-registry exited: ${r.output}`);
      const ok = await fetch(`http://${r.host}/v2/`).then(
        (res) => res.status === 200 || res.status === 401,
        () => false,
      );
      if (ok) return r;
      if (Date.now() > deadline) throw new Error(`docker-registry did not start: ${r.output}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  /** The file holding a blob as the registry serves it (for tests that corrupt one). */
  blobPath(digest: string): string {
    const hex = digest.replace('sha256:', '');
    return join(this.storage, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex, 'data');
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    await new Promise((res) => (this.tokenServer ? this.tokenServer.close(res) : res(undefined)));
    await rm(this.dir, { recursive: true, force: true });
  }
}

const TOKEN_SERVICE = 'sandpit-test-registry';
const TOKEN_ISSUER = 'sandpit-test-token-issuer';

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** A token endpoint: checks basic credentials and answers a JWT (RS256, its certificate in x5c) granting the asked scope. */
async function startTokenServer(dir: string, auth: { username: string; password: string }): Promise<{ server: Server; realm: string }> {
  await runCommand('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    join(dir, 'token-key.pem'),
    '-out',
    join(dir, 'token-cert.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=sandpit-test-token',
  ]);
  const key = createPrivateKey(await readFile(join(dir, 'token-key.pem')));
  const cert = new X509Certificate(await readFile(join(dir, 'token-cert.pem')));
  const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const given = req.headers.authorization;
    if (given !== undefined && given !== expected) {
      res.writeHead(401).end('{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}');
      return;
    }
    const access =
      given === undefined
        ? []
        : url.searchParams.getAll('scope').map((scope) => {
            const [type, name, actions] = scope.split(':');
            return { type, name, actions: (actions ?? '').split(',').filter(Boolean) };
          });
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: 'RS256', typ: 'JWT', x5c: [cert.raw.toString('base64')] };
    const claims = { iss: TOKEN_ISSUER, sub: given ? auth.username : '', aud: TOKEN_SERVICE, exp: now + 600, nbf: now - 60, iat: now, jti: randomBytes(8).toString('hex'), access };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    const token = `${input}.${b64url(sign('sha256', Buffer.from(input), key))}`;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token, access_token: token, expires_in: 600 }));
  });
  const port = await freePort();
  await new Promise<void>((res) => server.listen(port, '127.0.0.1', res));
  return { server, realm: `http://127.0.0.1:${port}/token` };
}
