import { createPrivateKey, createPublicKey, hkdfSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { fingerprint } from './ssh-keys.ts';

// ssh2 is CommonJS: its named exports are read off the default export.
const { utils } = ssh2;

export const HOST_KEY_FILE = 'ssh_host_ed25519_key';

export interface HostKey {
  /** OpenSSH private key text. */
  private: string;
  /** `SHA256:...`, what an SSH client shows on first connect. */
  fingerprint: string;
  /** The public key line, for known_hosts. */
  publicLine: string;
  /** The public key in SSH's wire format (what a client's host verifier is given). */
  publicBlob: Buffer;
}

/** The installation's host key: generated once into the data directory, then read back on every start. */
export async function loadHostKey(dataDir: string): Promise<HostKey> {
  const path = join(dataDir, HOST_KEY_FILE);
  let text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (text === undefined) {
    // 'wx': a second process starting at once keeps the first one's key.
    await writeFile(path, newHostKey(), { mode: 0o600, flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    text = await readFile(path, 'utf8');
  }
  return hostKeyOf(text, path);
}

/**
 * The host key of a cluster, the same on every API replica and node: derived from the cluster key, so
 * clients see one key whichever replica answers, and a replica knows the key of the nodes it relays to.
 */
export function clusterHostKey(clusterKey: Buffer): HostKey {
  const seed = Buffer.from(hkdfSync('sha256', clusterKey, Buffer.alloc(0), 'sandpit ssh host key (ed25519)', 32));
  return hostKeyOf(openSshEd25519(seed), 'the cluster key');
}

function hostKeyOf(text: string, from: string): HostKey {
  const parsed = utils.parseKey(text);
  if (parsed instanceof Error || Array.isArray(parsed)) throw new Error(`${from} is not an SSH private key`);
  const blob = parsed.getPublicSSH();
  return { private: text, fingerprint: fingerprint(blob), publicLine: `${parsed.type} ${blob.toString('base64')}`, publicBlob: blob };
}

/** OpenSSH's private key file (openssh-key-v1, unencrypted) for an ed25519 seed: ssh2 reads no other ed25519 format, and writes one only for a fresh key. */
function openSshEd25519(seed: Buffer): string {
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const jwk = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  const pub = Buffer.from(jwk.x!, 'base64url');
  const str = (b: Buffer | string) => {
    const body = typeof b === 'string' ? Buffer.from(b) : b;
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length);
    return Buffer.concat([len, body]);
  };
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n >>> 0);
    return b;
  };
  const type = 'ssh-ed25519';
  const publicBlob = Buffer.concat([str(type), str(pub)]);
  // The check words only tell a right passphrase from a wrong one; from the seed, so the text is the same each time.
  const check = seed.readUInt32BE(0);
  let secret = Buffer.concat([u32(check), u32(check), str(type), str(pub), str(Buffer.concat([seed, pub])), str('sandpit-cluster-host')]);
  const pad = (8 - (secret.length % 8)) % 8;
  secret = Buffer.concat([secret, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const file = Buffer.concat([Buffer.from('openssh-key-v1\0'), str('none'), str('none'), str(''), u32(1), str(publicBlob), str(secret)]);
  const lines = file.toString('base64').match(/.{1,70}/g)!;
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

/** A fresh ed25519 key in OpenSSH's format. ssh2's generator now and then writes one it cannot read back (about 1 in 300): those are made again. */
function newHostKey(): string {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519', { comment: 'sandpit-host' });
    const back = utils.parseKey(pair.private);
    if (!(back instanceof Error) && !Array.isArray(back)) return pair.private;
  }
}
