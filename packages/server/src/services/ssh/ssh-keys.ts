import { createHash } from 'node:crypto';
import ssh2 from 'ssh2';
import { badRequest, conflict, notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { CreateSshKeyBody } from '../../schemas/ssh-key.ts';
import type { SshKeyRecord, SshKeyStore } from '../../store/ssh-keys.ts';
import type { Principal } from '../access/principal.ts';

// ssh2 is CommonJS: its named exports are read off the default export.
const { utils } = ssh2;

/** OpenSSH's fingerprint of a key's wire blob, as `ssh-keygen -l` prints it. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The public key of one OpenSSH key line; a private key or anything else is refused. */
export function parsePublicKey(line: string): { algorithm: string; blob: Buffer; comment: string } {
  const parsed = utils.parseKey(line.trim());
  if (parsed instanceof Error || Array.isArray(parsed)) throw badRequest('public_key is not one OpenSSH public key line (like the contents of ~/.ssh/id_ed25519.pub)');
  if (parsed.isPrivateKey()) throw badRequest('public_key is a private key: send the .pub file, never the private key');
  return { algorithm: parsed.type, blob: parsed.getPublicSSH(), comment: parsed.comment };
}

/** The SSH public keys a team logs in to its sandboxes with. */
export class SshKeyService {
  readonly #store: SshKeyStore;
  readonly #now: () => number;

  constructor(store: SshKeyStore, now: () => number) {
    this.#store = store;
    this.#now = now;
  }

  async add(p: Principal, body: CreateSshKeyBody): Promise<SshKeyRecord> {
    const key = parsePublicKey(body.public_key);
    const rec: SshKeyRecord = {
      id: newId(),
      teamId: p.teamId,
      name: body.name ?? (key.comment || key.algorithm),
      algorithm: key.algorithm,
      publicKey: key.blob.toString('base64'),
      fingerprint: fingerprint(key.blob),
      createdAt: this.#now(),
    };
    if (!(await this.#store.insert(rec))) throw conflict(`the team already has this key (${rec.fingerprint})`);
    return rec;
  }

  list(p: Principal): Promise<SshKeyRecord[]> {
    return this.#store.list(p.teamId);
  }

  async remove(p: Principal, id: string): Promise<void> {
    if (!(await this.#store.delete(p.teamId, id))) throw notFound(`ssh key '${id.slice(0, 64)}' not found`);
  }

  /** The team's key with this wire blob, if it has one. */
  async find(teamId: string, blob: Buffer): Promise<SshKeyRecord | undefined> {
    const k = await this.#store.byFingerprint(teamId, fingerprint(blob));
    return k && Buffer.from(k.publicKey, 'base64').equals(blob) ? k : undefined;
  }
}
