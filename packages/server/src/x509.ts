import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

/** Every key and signature of Sandpit's own CAs and certificates. */
export const X509_ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
export const DAY = 86_400_000;

/** PEM text of DER bytes under `label` (64 characters a line). */
export const pem = (label: string, der: ArrayBuffer) =>
  `-----BEGIN ${label}-----\n${Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trimEnd()}\n-----END ${label}-----\n`;

/** The DER bytes of one PEM block. */
export const der = (text: string) => Buffer.from(text.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');

/** Positive, random: two certificates of one CA never share a serial. */
export function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0]! &= 0x7f;
  return Buffer.from(bytes).toString('hex');
}

export async function newKeyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(X509_ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
}

export async function privateKeyPem(keys: CryptoKeyPair): Promise<string> {
  return pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as unknown as webcrypto.CryptoKey));
}

/** A self-signed CA that signs end certificates only (path length 0), valid from a day ago for `days`; PEM. */
export async function createCa(subject: string, days: number): Promise<{ cert: string; key: string }> {
  const keys = await newKeyPair();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: subject,
    serialNumber: randomSerial(),
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + days * DAY),
    signingAlgorithm: X509_ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: `${cert.toString('pem')}\n`, key: await privateKeyPem(keys) };
}

/** The private key of a PEM `key`, for signing. */
export async function signingKey(keyPem: string): Promise<CryptoKey> {
  return (await webcrypto.subtle.importKey('pkcs8', der(keyPem), X509_ALG, false, ['sign'])) as unknown as CryptoKey;
}

export { x509 };
