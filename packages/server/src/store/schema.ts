import type { Generated } from 'kysely';

/** Row shapes of every table. Times are epoch milliseconds; JSON columns are text. */
export interface TeamTable {
  id: string;
  name: string;
  /** JSON object of per-team limit overrides (null: server defaults). */
  limits: string | null;
  created_at: number;
}

export interface UserTable {
  id: string;
  team_id: string;
  email: string;
  full_name: string;
  status: string;
  created_at: number;
  updated_at: number;
}

export interface ApiKeyTable {
  id: string;
  team_id: string;
  user_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  /** JSON array of permission names. */
  permissions: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface SandboxTable {
  id: string;
  team_id: string;
  name: string | null;
  template_id: string;
  driver: string;
  region: string;
  status: string;
  metadata: string;
  env: string;
  network: string | null;
  secrets: string;
  preview_access: string;
  resources: string;
  access_token: string;
  auto_pause_seconds: number | null;
  auto_delete_seconds: number | null;
  auto_pause_at: number | null;
  auto_delete_at: number | null;
  active_since: number | null;
  paused_at: number | null;
  latest_snapshot_id: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface SandboxMetadataTable {
  sandbox_id: string;
  key: string;
  value: string;
}

/** Append-only lifecycle log: the source for metering and for audit. */
export interface SandboxEventTable {
  seq: Generated<number>;
  sandbox_id: string;
  team_id: string;
  type: string;
  at: number;
  data: string | null;
}

export interface Database {
  teams: TeamTable;
  users: UserTable;
  api_keys: ApiKeyTable;
  sandboxes: SandboxTable;
  sandbox_metadata: SandboxMetadataTable;
  sandbox_events: SandboxEventTable;
}
