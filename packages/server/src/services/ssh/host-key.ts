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
  const parsed = utils.parseKey(text);
  if (parsed instanceof Error || Array.isArray(parsed)) throw new Error(`${path} is not an SSH private key`);
  const blob = parsed.getPublicSSH();
  return { private: text, fingerprint: fingerprint(blob), publicLine: `${parsed.type} ${blob.toString('base64')}` };
}

/** A fresh ed25519 key in OpenSSH's format. ssh2's generator now and then writes one it cannot read back (about 1 in 300): those are made again. */
function newHostKey(): string {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519', { comment: 'sandpit-host' });
    const back = utils.parseKey(pair.private);
    if (!(back instanceof Error) && !Array.isArray(back)) return pair.private;
  }
}
