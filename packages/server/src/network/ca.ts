import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { isIP } from 'node:net';
import { createCa, DAY, newKeyPair, privateKeyPem, signingKey, X509_ALG, x509 } from '../x509.ts';
const LEAF_CACHE_MAX = 2000;

/**
 * A CA of the installation that signs a certificate per host name (cached in memory), created on
 * first start in the data dir (key 0600): the egress CA (trusted by every sandbox; a certificate per
 * intercepted host), and the E2B port's (a certificate per `{port}-{id}.{domain}` host, for clients that trust it).
 */
export class HostCa {
  readonly certPem: string;
  readonly #cert: x509.X509Certificate;
  readonly #caKey: CryptoKey;
  readonly #leafKeys: CryptoKeyPair;
  readonly #leafKeyPem: string;
  readonly #leaves = new Map<string, Promise<SecureContext>>();

  private constructor(cert: x509.X509Certificate, caKey: CryptoKey, leafKeys: CryptoKeyPair, leafKeyPem: string) {
    this.#cert = cert;
    this.certPem = `${cert.toString('pem')}\n`;
    this.#caKey = caKey;
    this.#leafKeys = leafKeys;
    this.#leafKeyPem = leafKeyPem;
  }

  static async load(dir: string, name: string): Promise<HostCa> {
    const keyFile = join(dir, 'ca.key');
    const certFile = join(dir, 'ca.crt');
    let keyPem = await readFile(keyFile, 'utf8').catch(() => undefined);
    let certPem = await readFile(certFile, 'utf8').catch(() => undefined);
    if (!keyPem || !certPem) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      ({ cert: certPem, key: keyPem } = await createCa(`CN=${name}, O=Sandpit`, 3650));
      // Written under temporary names and renamed, so a crash never leaves a key without its cert.
      await writeFile(`${keyFile}.tmp`, keyPem, { mode: 0o600 });
      await writeFile(`${certFile}.tmp`, certPem, { mode: 0o644 });
      await rename(`${keyFile}.tmp`, keyFile);
      await rename(`${certFile}.tmp`, certFile);
    }
    const caKey = await signingKey(keyPem);
    const leafKeys = await newKeyPair();
    const leafKeyPem = await privateKeyPem(leafKeys);
    return new HostCa(new x509.X509Certificate(certPem), caKey, leafKeys, leafKeyPem);
  }

  /** A TLS context presenting a certificate for `host` signed by this CA. */
  contextFor(host: string): Promise<SecureContext> {
    const key = host.toLowerCase();
    let ctx = this.#leaves.get(key);
    if (!ctx) {
      if (this.#leaves.size >= LEAF_CACHE_MAX) this.#leaves.delete(this.#leaves.keys().next().value!);
      ctx = this.#issue(key);
      ctx.catch(() => this.#leaves.delete(key));
      this.#leaves.set(key, ctx);
    }
    return ctx;
  }

  async #issue(host: string): Promise<SecureContext> {
    const now = Date.now();
    const leaf = await x509.X509CertificateGenerator.create({
      subject: `CN=${host.replace(/[,+="\\<>;#]/g, '')}`,
      issuer: this.#cert.subject,
      notBefore: new Date(now - DAY),
      notAfter: new Date(now + 365 * DAY),
      signingAlgorithm: X509_ALG,
      publicKey: this.#leafKeys.publicKey,
      signingKey: this.#caKey,
      extensions: [
        new x509.SubjectAlternativeNameExtension([{ type: isIP(host) ? 'ip' : 'dns', value: host }]),
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        await x509.AuthorityKeyIdentifierExtension.create(this.#cert),
      ],
    });
    return createSecureContext({ key: this.#leafKeyPem, cert: leaf.toString('pem') });
  }
}
