import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from 'node:tls';
import type { TlsFiles } from '../cluster/internal-channel.ts';
import { type CertPair, createClusterCa, fingerprint256, issueMemberCert, type MemberRole, NODE_DOMAIN } from '../cluster/member-certificates.ts';
import { writeFileAtomic } from '../optional-files.ts';
import { sleep } from './processes.ts';

/** A member as the certificates see it: its name, role, and where its TLS listener is (none for the operator). */
export interface CertHolder {
  name: string;
  role: MemberRole;
  tlsPort?: number;
}

/** The operator's own certificate: `cluster status`, drain and the rotation use it. */
export const OPERATOR = 'operator';
/** How long a rotation waits for one member to take up new files. */
const TAKE_UP_MS = 30_000;

/**
 * The certificates of a local cluster, in `<dir>`: the CA (`ca.key`, `ca.crt`, the bundle members
 * trust, which holds two CAs while one replaces the other) and a certificate and key per member
 * and for the operator. Members read their files again when they change, so a rotation writes new
 * files and waits until every member presents what was written.
 */
export class ClusterCerts {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  files(name: string): TlsFiles {
    return { ca: join(this.dir, 'ca.crt'), cert: join(this.dir, `${name}.crt`), key: join(this.dir, `${name}.key`) };
  }

  /** A new CA and a certificate for each holder and for the operator. */
  async create(holders: CertHolder[]): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const ca = await createClusterCa();
    await this.#writeCa(ca, ca.cert);
    for (const h of [...holders, { name: OPERATOR, role: 'operator' as const }]) await this.#write(h.name, await issueMemberCert(ca, h));
  }

  /**
   * New certificates for every holder and the operator, without a moment in which two members
   * refuse each other. With `newCa`, a new CA too: members first trust both CAs, then get
   * certificates of the new one, then trust only it; each step waits until every member has taken it up.
   */
  async rotate(holders: CertHolder[], opts: { newCa?: boolean; onProgress?: (line: string) => void } = {}): Promise<void> {
    const progress = opts.onProgress ?? (() => undefined);
    const old = await this.#ca();
    if (!opts.newCa) {
      progress('issuing new certificates');
      return this.#reissue(holders, old, old.cert);
    }
    const next = await createClusterCa();
    const both = `${old.cert}${next.cert}`;
    // A new certificate with each bundle change shows, when a member presents it, that it read the bundle too.
    progress('members trust the old and the new CA');
    await this.#reissue(holders, old, both);
    progress('issuing certificates of the new CA');
    await this.#writeCa(next, both);
    await this.#reissue(holders, next, both);
    progress('members trust the new CA only');
    await this.#reissue(holders, next, next.cert);
  }

  /** A certificate of the cluster CA for `name`, as a test or a tool wants it (an expired one, say); not written. */
  async issue(name: string, role: MemberRole, validity?: { notBefore: Date; notAfter: Date }): Promise<CertPair> {
    return issueMemberCert(await this.#ca(), { name, role, ...validity });
  }

  /** Puts `pair` in place of `name`'s certificate and key, as an operator replacing one by hand would; the member takes it up within a second. */
  async replace(name: string, pair: CertPair): Promise<void> {
    await this.#write(name, pair);
  }

  /** Writes the bundle, then each holder's new certificate, and waits until each presents its own. */
  async #reissue(holders: CertHolder[], ca: CertPair, bundle: string): Promise<void> {
    await writeFileAtomic(join(this.dir, 'ca.crt'), bundle, 0o644);
    const operator = await issueMemberCert(ca, { name: OPERATOR, role: 'operator' });
    await this.#write(OPERATOR, operator);
    const issued = await Promise.all(holders.map(async (h) => ({ h, pair: await issueMemberCert(ca, h) })));
    for (const { h, pair } of issued) await this.#write(h.name, pair);
    await Promise.all(issued.filter(({ h }) => h.tlsPort !== undefined).map(({ h, pair }) => this.#presented(h, pair.cert)));
  }

  async #presented(h: CertHolder, cert: string): Promise<void> {
    const want = await fingerprint256(cert);
    const deadline = Date.now() + TAKE_UP_MS;
    for (;;) {
      const got = await presentedFingerprint(h.tlsPort!).catch(() => undefined);
      if (got === want) return;
      if (Date.now() > deadline) throw new Error(`${h.name} did not take up its new certificate within ${TAKE_UP_MS / 1000} s (is it running? see its log)`);
      await sleep(200);
    }
  }

  async #ca(): Promise<CertPair> {
    const [cert, key] = await Promise.all([readFile(join(this.dir, 'ca.crt.own'), 'utf8'), readFile(join(this.dir, 'ca.key'), 'utf8')]);
    return { cert, key };
  }

  /** The signing CA (`ca.crt.own`, `ca.key`) and the bundle members trust (`ca.crt`). */
  async #writeCa(ca: CertPair, bundle: string): Promise<void> {
    await writeFileAtomic(join(this.dir, 'ca.key'), ca.key, 0o600);
    await writeFileAtomic(join(this.dir, 'ca.crt.own'), ca.cert, 0o644);
    await writeFileAtomic(join(this.dir, 'ca.crt'), bundle, 0o644);
  }

  async #write(name: string, pair: CertPair): Promise<void> {
    // The key first: a member that sees the new certificate before its key waits for the key (a mismatch keeps the old pair).
    await writeFileAtomic(join(this.dir, `${name}.key`), pair.key, 0o600);
    await writeFileAtomic(join(this.dir, `${name}.crt`), pair.cert, 0o644);
  }
}

/**
 * `cluster certs`: a cluster CA (or the one in `caDir`) and certificates of the roles api, node and operator
 * in `out`, for members run outside `cluster up` (Kubernetes). A CA is never overwritten. Answers the files written.
 */
export async function writeRoleCerts(opts: { out: string; apiHost: string[]; caDir?: string }): Promise<string[]> {
  const existing = await readFile(join(opts.out, 'ca.key'), 'utf8').catch(() => undefined);
  let ca: CertPair;
  if (opts.caDir) {
    const [cert, key] = await Promise.all([readFile(join(opts.caDir, 'ca.crt'), 'utf8'), readFile(join(opts.caDir, 'ca.key'), 'utf8')]);
    if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) throw new Error(`${opts.caDir}: ca.key is not the key of ca.crt`);
    if (existing !== undefined && existing !== key) throw new Error(`${opts.out} holds another CA's key (ca.key): not overwriting it; choose another --out`);
    ca = { cert, key };
  } else {
    if (existing !== undefined) throw new Error(`${opts.out} already holds a cluster CA (ca.key): not overwriting it; reissue from it with --ca-dir ${opts.out}, or choose another --out`);
    ca = await createClusterCa();
  }
  const loopback = ['localhost', '127.0.0.1'];
  const members = [
    { name: 'api', role: 'api' as const, hosts: [...new Set([...opts.apiHost, ...loopback])] },
    // One certificate for every node: curl asks for <node id>.node.sandpit.internal.
    { name: 'node', role: 'node' as const, hosts: [`*.${NODE_DOMAIN}`, ...loopback] },
    { name: OPERATOR, role: 'operator' as const, hosts: loopback },
  ];
  await mkdir(opts.out, { recursive: true, mode: 0o700 });
  const certs = new ClusterCerts(opts.out);
  const written = ['ca.crt'];
  await writeFileAtomic(join(opts.out, 'ca.crt'), ca.cert, 0o644);
  // A reissue leaves the CA key where it is.
  if (!opts.caDir) {
    await writeFileAtomic(join(opts.out, 'ca.key'), ca.key, 0o600);
    written.push('ca.key');
  }
  for (const m of members) {
    await certs.replace(m.name, await issueMemberCert(ca, m));
    written.push(`${m.name}.crt`, `${m.name}.key`);
  }
  return written;
}

/** The SHA-256 fingerprint of the certificate a TLS listener on loopback presents. */
function presentedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fp);
    });
    socket.setTimeout(5000, () => socket.destroy(new Error('timed out')));
    socket.on('error', reject);
  });
}
