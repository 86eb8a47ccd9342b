import { isIP } from 'node:net';
import { createCa, DAY, newKeyPair, privateKeyPem, randomSerial, signingKey, X509_ALG, x509 } from '../x509.ts';

/** A member's certificate lives this long; `cluster rotate-certs` issues new ones well before. */
export const MEMBER_CERT_DAYS = 90;
const CA_DAYS = 3650;

/** Nodes' names in certificates: `<node id>.node.sandpit.internal` (one per node, or a wildcard for a role's shared certificate). */
export const NODE_DOMAIN = 'node.sandpit.internal';
export const nodeHostName = (nodeId: string) => `${nodeId}.${NODE_DOMAIN}`;

/** What a certificate of the internal channel says its holder is (its subject's OU). */
export type MemberRole = 'api' | 'node' | 'operator';

/** A certificate and its private key, PEM. */
export interface CertPair {
  cert: string;
  key: string;
}

export interface MemberCertOptions {
  /** The member's name (a node's id), the subject's CN. */
  name: string;
  role: MemberRole;
  /** Names and addresses it is reached at (subject alternative names). Default: loopback, and a node's name on the internal domain. */
  hosts?: string[];
  notBefore?: Date;
  notAfter?: Date;
}

/** A cluster CA: it signs members' certificates only (path length 0). */
export function createClusterCa(label = 'Sandpit cluster CA'): Promise<CertPair> {
  return createCa(`CN=${label}, O=Sandpit`, CA_DAYS);
}

/** A member's certificate, signed by `ca`, good for both ends of a connection (server and client). */
export async function issueMemberCert(ca: CertPair, o: MemberCertOptions): Promise<CertPair> {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(o.name)) throw new Error(`a member name is [A-Za-z0-9._-]{1,64}, got '${o.name}'`);
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await signingKey(ca.key);
  const keys = await newKeyPair();
  const now = Date.now();
  const hosts = o.hosts ?? ['127.0.0.1', 'localhost', ...(o.role === 'node' ? [nodeHostName(o.name)] : [])];
  const cert = await x509.X509CertificateGenerator.create({
    subject: `CN=${o.name}, OU=${o.role}, O=Sandpit`,
    issuer: caCert.subject,
    serialNumber: randomSerial(),
    notBefore: o.notBefore ?? new Date(now - 60_000),
    notAfter: o.notAfter ?? new Date(now + MEMBER_CERT_DAYS * DAY),
    signingAlgorithm: X509_ALG,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIP(h) ? ('ip' as const) : ('dns' as const), value: h }))),
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { cert: `${cert.toString('pem')}\n`, key: await privateKeyPem(keys) };
}

/** SHA-256 fingerprint of a PEM certificate, as Node's `getPeerCertificate().fingerprint256` writes it. */
export async function fingerprint256(certPem: string): Promise<string> {
  const digest = Buffer.from(await new x509.X509Certificate(certPem).getThumbprint('SHA-256'));
  return [...digest].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
}
