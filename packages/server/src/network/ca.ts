import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { isIP } from 'node:net';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY = 86_400_000;
const LEAF_CACHE_MAX = 2000;

const pem = (label: string, der: ArrayBuffer) =>
  `-----BEGIN ${label}-----\n${Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trimEnd()}\n-----END ${label}-----\n`;
const der = (text: string) => Buffer.from(text.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');

/**
 * The installation's egress CA: created on first start in the data dir (key 0600), trusted by
 * every sandbox, and used to sign a leaf certificate per intercepted host (cached in memory).
 */
export class EgressCa {
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

  static async load(dir: string): Promise<EgressCa> {
    const keyFile = join(dir, 'ca.key');
    const certFile = join(dir, 'ca.crt');
    let keyPem = await readFile(keyFile, 'utf8').catch(() => undefined);
    let certPem = await readFile(certFile, 'utf8').catch(() => undefined);
    if (!keyPem || !certPem) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
      const now = Date.now();
      const cert = await x509.X509CertificateGenerator.createSelfSigned({
        name: 'CN=Sandpit egress CA, O=Sandpit',
        notBefore: new Date(now - DAY),
        notAfter: new Date(now + 3650 * DAY),
        signingAlgorithm: ALG,
        keys,
        extensions: [
          new x509.BasicConstraintsExtension(true, 0, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        ],
      });
      keyPem = pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
      certPem = `${cert.toString('pem')}\n`;
      // Written under temporary names and renamed, so a crash never leaves a key without its cert.
      await writeFile(`${keyFile}.tmp`, keyPem, { mode: 0o600 });
      await writeFile(`${certFile}.tmp`, certPem, { mode: 0o644 });
      await rename(`${keyFile}.tmp`, keyFile);
      await rename(`${certFile}.tmp`, certFile);
    }
    const caKey = (await webcrypto.subtle.importKey('pkcs8', der(keyPem), ALG, false, ['sign'])) as unknown as CryptoKey;
    const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
    const leafKeyPem = pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey as unknown as webcrypto.CryptoKey));
    return new EgressCa(new x509.X509Certificate(certPem), caKey, leafKeys, leafKeyPem);
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
      signingAlgorithm: ALG,
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
