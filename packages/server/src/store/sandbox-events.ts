import type { Db } from './db.ts';

export interface SandboxEventRecord {
  seq: number;
  type: string;
  at: number;
  data: Record<string, unknown> | null;
}

/** Reads a sandbox's lifecycle events, the log SandboxStore appends to and metering consumes. */
export async function listSandboxEvents(db: Db, sandboxId: string, afterSeq: number, limit: number): Promise<SandboxEventRecord[]> {
  const rows = await db.selectFrom('sandbox_events').select(['seq', 'type', 'at', 'data']).where('sandbox_id', '=', sandboxId).where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
  return rows.map((r) => ({ seq: Number(r.seq), type: r.type, at: Number(r.at), data: r.data ? JSON.parse(r.data) : null }));
}
