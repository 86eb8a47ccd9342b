import type { Db } from './db.ts';

export interface SshKeyRecord {
  id: string;
  teamId: string;
  name: string;
  algorithm: string;
  /** The key's OpenSSH wire blob, base64. */
  publicKey: string;
  fingerprint: string;
  createdAt: number;
}

type SshKeyRow = { id: string; team_id: string; name: string; algorithm: string; public_key: string; fingerprint: string; created_at: number };

const toKey = (r: SshKeyRow): SshKeyRecord => ({
  id: r.id,
  teamId: r.team_id,
  name: r.name,
  algorithm: r.algorithm,
  publicKey: r.public_key,
  fingerprint: r.fingerprint,
  createdAt: Number(r.created_at),
});

/** Team SSH public keys. */
export class SshKeyStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** False when the team already has this key. */
  async insert(k: SshKeyRecord): Promise<boolean> {
    try {
      await this.db
        .insertInto('ssh_keys')
        .values({ id: k.id, team_id: k.teamId, name: k.name, algorithm: k.algorithm, public_key: k.publicKey, fingerprint: k.fingerprint, created_at: k.createdAt })
        .execute();
      return true;
    } catch (err) {
      if (/UNIQUE|duplicate key/i.test(String(err))) return false;
      throw err;
    }
  }

  async list(teamId: string): Promise<SshKeyRecord[]> {
    const rows = await this.db.selectFrom('ssh_keys').selectAll().where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toKey);
  }

  async byFingerprint(teamId: string, fingerprint: string): Promise<SshKeyRecord | undefined> {
    const row = await this.db.selectFrom('ssh_keys').selectAll().where('team_id', '=', teamId).where('fingerprint', '=', fingerprint).executeTakeFirst();
    return row && toKey(row);
  }

  async delete(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('ssh_keys').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
