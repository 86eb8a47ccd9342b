import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const SERVER = new URL('./internet-server.ts', import.meta.url).pathname;
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

/**
 * A fake internet in a network namespace of its own, on 198.18.0.0/15 (benchmark space: never
 * the host's ranges): several addresses, each serving HTTP, HTTPS (certificates from a test CA)
 * and DNS. The host reaches it over a veth; nothing else is routed.
 */
export class Internet {
  readonly ns: string;
  readonly hostIf: string;
  readonly net: string;
  readonly caFile: string;
  /** name -> address; `dns` is the resolver address. */
  readonly names: Record<string, string>;
  readonly dns: string;
  child: ChildProcess | undefined;

  private constructor(tag: string, dir: string, n: number) {
    this.ns = `spt-inet-${tag}`;
    this.hostIf = `spti${tag}`;
    this.net = `198.19.${n}`;
    this.caFile = join(dir, 'test-ca.crt');
    this.dns = `${this.net}.2`;
    this.names = {
      'api.example.test': `${this.net}.2`,
      'www.example.test': `${this.net}.3`,
      'deep.sub.example.test': `${this.net}.3`,
      'example.test': `${this.net}.4`,
      'other.test': `${this.net}.5`,
      'evil.test': `${this.net}.6`,
    };
  }

  static async start(dir: string): Promise<Internet> {
    const n = 100 + Math.floor(Math.random() * 150);
    const tag = Math.random().toString(16).slice(2, 8);
    const inet = new Internet(tag, dir, n);
    try {
      await inet.#setUp();
    } catch (err) {
      inet.stop();
      throw err;
    }
    return inet;
  }

  async #setUp(): Promise<void> {
    ip(['netns', 'add', this.ns]);
    ip(['link', 'add', this.hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', this.ns]);
    ip(['addr', 'add', `${this.net}.1/24`, 'dev', this.hostIf]);
    ip(['link', 'set', this.hostIf, 'up']);
    for (const last of [2, 3, 4, 5, 6]) ip(['-n', this.ns, 'addr', 'add', `${this.net}.${last}/24`, 'dev', 'eth0']);
    ip(['-n', this.ns, 'link', 'set', 'eth0', 'up']);
    ip(['-n', this.ns, 'link', 'set', 'lo', 'up']);

    const caKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      name: 'CN=Sandpit test internet CA',
      keys: caKeys,
      signingAlgorithm: ALG,
      extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
    });
    const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
    const leaf = await x509.X509CertificateGenerator.create({
      subject: 'CN=example.test',
      issuer: ca.subject,
      publicKey: leafKeys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: ALG,
      extensions: [new x509.SubjectAlternativeNameExtension([...Object.keys(this.names), '*.example.test'].map((value) => ({ type: 'dns' as const, value })))],
    });
    const key = `-----BEGIN PRIVATE KEY-----\n${Buffer.from(await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey as unknown as webcrypto.CryptoKey)).toString('base64')}\n-----END PRIVATE KEY-----\n`;
    await writeFile(this.caFile, ca.toString('pem'));

    const child = spawn('ip', ['netns', 'exec', this.ns, process.execPath, SERVER, JSON.stringify({ key, cert: leaf.toString('pem'), names: this.names })], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`internet did not start: ${out}`)), 10_000);
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('internet ready')) {
          clearTimeout(t);
          resolve();
        }
      });
      child.stderr!.on('data', (d) => (out += d));
      child.on('exit', () => reject(new Error(`internet exited: ${out}`)));
    });
  }

  /** Removes the server process, the veth pair and the namespace; safe to call twice. */
  stop(): void {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    spawnSync('ip', ['link', 'del', this.hostIf]);
    spawnSync('ip', ['netns', 'del', this.ns]);
  }
}

function ip(args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
}
