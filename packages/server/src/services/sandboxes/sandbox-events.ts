import type { SandboxEvent } from '../../schemas/sandbox-observability.ts';
import type { Db } from '../../store/db.ts';
import { listSandboxEvents, type SandboxEventRecord } from '../../store/sandbox-events.ts';

const FAILURES: Record<string, string> = {
  engine_out_of_memory: 'failed: it ran out of memory and its engine was killed',
  engine_exited: 'failed: its engine exited',
  engine_lost: 'failed: the engine no longer held it when the server started',
  node_lost: 'failed: its node stopped answering',
};

function failedBecause(reason: unknown, during: string | undefined): string {
  if (typeof reason === 'string') return FAILURES[reason] ?? `failed: ${reason}`;
  return during ? `failed while ${during === 'pause' ? 'pausing' : during}` : 'failed';
}

/** Why an event happened, in words a person reads in the console or the CLI. */
export function reasonOf(e: SandboxEventRecord): string {
  const during = typeof e.data?.during === 'string' ? e.data.during : undefined;
  switch (e.type) {
    case 'created':
      return 'created by request';
    case 'paused':
      return during === 'snapshot' ? 'paused to take a snapshot' : during === 'migrate' ? 'paused: a move between nodes could not resume it' : 'paused by request';
    case 'auto_paused':
      return 'paused by auto-pause after its idle timeout';
    case 'resumed':
      return 'resumed by request (or by a data-plane call to the paused sandbox)';
    case 'snapshot':
      return typeof e.data?.snapshot_id === 'string' ? `snapshot ${e.data.snapshot_id} taken` : 'snapshot taken';
    case 'failed':
      return failedBecause(e.data?.reason, during);
    case 'reconciled_active':
      return 'found running when the server started';
    case 'reconciled_paused':
      return 'found paused when the server started';
    case 'migrating':
      return `moving with its memory to node '${String(e.data?.to)}'`;
    case 'migrated':
      return `running on node '${String(e.data?.to)}', moved from node '${String(e.data?.from)}'`;
    case 'migrate_failed':
      return `the move to node '${String(e.data?.to)}' did not happen; it runs on where it was`;
    case 'updated':
      return 'settings updated by request';
    case 'deleted':
      return 'deleted by request';
    case 'auto_deleted':
      return 'deleted by auto-delete';
    default:
      return e.type;
  }
}

export class SandboxEvents {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  /** Events after `afterSeq`, oldest first; the caller has already checked the sandbox is the team's. */
  async list(sandboxId: string, afterSeq: number, limit: number): Promise<SandboxEvent[]> {
    const rows = await listSandboxEvents(this.#db, sandboxId, afterSeq, limit);
    return rows.map((e) => ({ seq: e.seq, type: e.type, at: new Date(e.at).toISOString(), reason: reasonOf(e), data: e.data }));
  }
}
