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
  failure_reason: string | null;
  /** The node holding it; null on a single host. */
  node_id: string | null;
  /** 1: an auto-pause keeps only the disk; null or 0: memory too. */
  auto_pause_disk_only: number | null;
  /** 1 while paused with only its disk kept (resume boots afresh); null or 0 otherwise. */
  paused_disk_only: number | null;
  /** Copies of resources' vcpu_count and memory_mib, summed by placement. */
  vcpu_count: number;
  memory_mib: number;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

/** A live sandbox's metadata pair, with the sandbox's team and creation time so a filtered list is read in list order. */
export interface SandboxMetadataTable {
  sandbox_id: string;
  key: string;
  value: string;
  team_id: string;
  created_at: number;
}

/** Append-only lifecycle log: the source for metering and for audit. */
export interface SandboxEventTable {
  seq: Generated<number>;
  sandbox_id: string;
  team_id: string;
  type: string;
  at: number;
  data: string | null;
  /** The sandbox as the API showed it after the event (JSON), for webhooks; null on rows older than webhooks. */
  resource?: string | null;
}

/** Append-only lifecycle log of snapshots and templates (ready, failed, built), read by webhooks by cursor. */
export interface ResourceEventTable {
  seq: Generated<number>;
  team_id: string;
  resource_type: string;
  resource_id: string;
  /** The webhook event type (snapshot.ready, template.built, ...). */
  type: string;
  at: number;
  /** Deliveries with one key go out in order (a snapshot's sandbox, a template). */
  ordering_key: string;
  /** The resource as the API showed it (JSON). */
  resource: string;
}

/** A team's webhook endpoint; the signing secret is AES-256-GCM ciphertext under the secrets key. */
export interface WebhookTable {
  id: string;
  team_id: string;
  url: string;
  /** JSON array of event types. */
  events: string;
  description: string | null;
  secret: string;
  active: number;
  created_at: number;
  updated_at: number;
}

/** The outbox: one event to one endpoint, sent until answered 2xx or given up after 24 h. */
export interface WebhookDeliveryTable {
  /** Insertion order: deliveries with one (webhook, ordering key) go out in this order. */
  n: Generated<number>;
  id: string;
  webhook_id: string;
  team_id: string;
  event_id: string;
  event_type: string;
  ordering_key: string;
  /** The exact body sent on every attempt. */
  payload: string;
  /** pending, delivered or failed. */
  status: string;
  attempts: number;
  next_attempt_at: number;
  last_status_code: number | null;
  last_error: string | null;
  /** JSON array of {at, status_code?, error?, duration_ms}. */
  attempt_log: string;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
}

/** How far a reader (webhooks) has read a log. */
export interface EventCursorTable {
  name: string;
  seq: number;
}

export interface ConsoleSessionTable {
  token_hash: string;
  key_id: string;
  created_at: number;
  expires_at: number;
}

export interface RoleAssignmentTable {
  id: string;
  team_id: string;
  user_id: string;
  role_name: string;
  scope_type: string;
  /** The user whose API key granted it (the owner itself for a team's first owner). */
  granted_by: string;
  granted_at: number;
  created_at: number;
  updated_at: number;
  revoked_at: number | null;
}

/** Explicit per-team rollout gate settings; a gate without a row has its default. */
export interface TeamGateTable {
  team_id: string;
  gate: string;
  enabled: number;
  updated_at: number;
}

/** Rates in USD per hour of one vCPU, one GiB of memory, one GiB of storage. */
export interface PricingPlanTable {
  plan_key: string;
  plan_name: string;
  currency: string;
  vcpu_hour_usd: number;
  memory_gib_hour_usd: number;
  storage_gib_hour_usd: number;
  trial_grant_usd: number;
  is_default: number;
  created_at: number;
}

export interface BillingAccountTable {
  team_id: string;
  plan_key: string;
  created_at: number;
  updated_at: number;
}

export interface BillingCreditTable {
  id: string;
  team_id: string;
  source: string;
  amount_usd: number;
  granted_at: number;
}

/** Usage and charges are null while the period is open and frozen when it is finalized. */
export interface BillingPeriodTable {
  id: string;
  team_id: string;
  period_start: number;
  period_end: number;
  status: string;
  plan_key: string;
  vcpu_seconds: number | null;
  memory_mib_seconds: number | null;
  storage_mib_seconds: number | null;
  charges_usd: number | null;
  credits_applied_usd: number | null;
  finalized_at: number | null;
  created_at: number;
  updated_at: number;
}

/** Metering ledger: `quantity` (vCPUs, memory MiB, storage bytes) held over [start_at, end_at). */
export interface MeterSegmentTable {
  id: Generated<number>;
  team_id: string;
  subject_kind: string;
  subject_id: string;
  resource: string;
  quantity: number;
  start_at: number;
  end_at: number | null;
}

export interface MeterCursorTable {
  name: string;
  seq: number;
}

/** A team secret; the value is AES-256-GCM ciphertext. Revoked rows are kept for audit. */
export interface SecretTable {
  id: string;
  team_id: string;
  name: string;
  ciphertext: string;
  /** JSON array of host patterns the value may be sent to; empty: any. */
  allowed_hosts: string;
  created_at: number;
  revoked_at: number | null;
}

/** A sandbox env var bound to a secret by id, so re-creating a name never revives an old binding. */
export interface SecretBindingTable {
  sandbox_id: string;
  env: string;
  secret_id: string;
  token: string;
  created_at: number;
}

export interface PreviewPortTable {
  sandbox_id: string;
  port: number;
  access: string;
  created_at: number;
}

/** Memory+disk snapshots; `env` is the captured sandbox's, inherited by forks. */
export interface SnapshotTable {
  id: string;
  team_id: string;
  sandbox_id: string;
  template_id: string | null;
  kind: string;
  status: string;
  name: string | null;
  size_bytes: number;
  /** JSON {vcpu_count, memory_mib, disk_mib}. */
  resources: string;
  env: string;
  idempotency_key: string | null;
  /** The node holding its files; null on a single host. */
  node_id: string | null;
  created_at: number;
  ready_at: number | null;
  updated_at: number;
  deleted_at: number | null;
}

/** A team's SSH public key (OpenSSH wire blob, base64); the fingerprint is OpenSSH's `SHA256:...`. */
export interface SshKeyTable {
  id: string;
  team_id: string;
  name: string;
  algorithm: string;
  public_key: string;
  fingerprint: string;
  created_at: number;
}

export interface FileMetadataTable {
  sandbox_id: string;
  path: string;
  /** A JSON object of strings. */
  data: string;
}

export interface Database {
  teams: TeamTable;
  users: UserTable;
  api_keys: ApiKeyTable;
  sandboxes: SandboxTable;
  sandbox_metadata: SandboxMetadataTable;
  sandbox_events: SandboxEventTable;
  console_sessions: ConsoleSessionTable;
  role_assignments: RoleAssignmentTable;
  team_gates: TeamGateTable;
  pricing_plans: PricingPlanTable;
  billing_accounts: BillingAccountTable;
  billing_credits: BillingCreditTable;
  billing_periods: BillingPeriodTable;
  meter_segments: MeterSegmentTable;
  meter_cursors: MeterCursorTable;
  secrets: SecretTable;
  secret_bindings: SecretBindingTable;
  preview_ports: PreviewPortTable;
  snapshots: SnapshotTable;
  templates: TemplateTable;
  template_builds: TemplateBuildTable;
  template_tags: TemplateTagTable;
  template_build_requests: TemplateBuildRequestTable;
  leases: LeaseTable;
  active_slot_claims: ActiveSlotClaimTable;
  rate_limits: RateLimitTable;
  snapshot_reservations: SnapshotReservationTable;
  nodes: NodeTable;
  region_endpoints: RegionEndpointTable;
  auth_epoch: AuthEpochTable;
  ssh_keys: SshKeyTable;
  file_metadata: FileMetadataTable;
  volumes: VolumeTable;
  volume_mounts: VolumeMountTable;
  audit_log: AuditLogTable;
  resource_events: ResourceEventTable;
  webhooks: WebhookTable;
  webhook_deliveries: WebhookDeliveryTable;
  event_cursors: EventCursorTable;
}

/** A team's volume: a disk of its own that outlives sandboxes. */
export interface VolumeTable {
  id: string;
  team_id: string;
  name: string;
  size_mib: number;
  /** The node holding its files (several hosts); null on a single host. */
  node_id: string | null;
  created_at: number;
  updated_at: number;
}

/** A volume mounted by a sandbox at `path`. */
export interface VolumeMountTable {
  sandbox_id: string;
  volume_id: string;
  path: string;
  read_only: number;
  created_at: number;
}

/** One mutating API call: who (key, user), what (action, resource), when, from where, and its HTTP status. Never a body. */
export interface AuditLogTable {
  id: string;
  team_id: string;
  at: number;
  /** api_key, console_session or access_token (the data plane). */
  actor_type: string;
  key_id: string | null;
  user_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  method: string;
  /** The route pattern, never the raw URL (no query string). */
  route: string;
  status: number;
  ip: string;
  user_agent: string | null;
  trace_id: string | null;
}

/** A single row (id 1): its epoch grows with every change to what API keys may do. */
export interface AuthEpochTable {
  id: number;
  epoch: number;
}

/** An API replica's URL, announced for its region every second. */
export interface RegionEndpointTable {
  url: string;
  region: string;
  heartbeat_at: number;
}

/** A host running sandboxes (`sandpit node`), as its last heartbeat described it. */
export interface NodeTable {
  id: string;
  region: string;
  /** Where API replicas reach it (internal channel). */
  url: string;
  vcpus: number;
  memory_mib: number;
  disk_mib: number;
  /** 0: no limit beyond memory. */
  max_sandboxes: number;
  /** JSON array of engine names. */
  engines: string;
  /** JSON object. */
  labels: string;
  /** JSON array of template version keys whose files the node holds. */
  templates: string;
  /** What its sandboxes held at its last heartbeat: placement reads this, not every sandbox row. */
  sandboxes: number;
  allocated_vcpus: number;
  allocated_memory_mib: number;
  /** ready, cordoned (no new sandboxes) or draining (no new sandboxes; its sandboxes are being moved off or ended). */
  state: string;
  registered_at: number;
  heartbeat_at: number;
  /** Set when the node fell silent past the deadline; cleared when it heartbeats again. */
  lost_at: number | null;
  /** When a sandbox last moved off it (drain). */
  moved_out_at: number | null;
}

export interface TemplateTable {
  id: string;
  team_id: string;
  name: string;
  /** JSON: the definition of the current (ready) version, or of the first build while none is ready. */
  definition: string;
  /** Status of the latest build: building, ready or failed. */
  status: string;
  error: string | null;
  /** JSON: what sandboxes of the current ready version start from (layers, env, workdir); null until a build succeeds. */
  build: string | null;
  /** JSON: the engine capture of that version (id, version key) sandboxes are restored from; null when there is none. */
  capture: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface TemplateTagTable {
  template_id: string;
  tag: string;
  build_id: string;
  created_at: number;
  version: string | null;
}

export interface TemplateBuildRequestTable {
  build_id: string;
  team_id: string;
  template_id: string;
  name: string;
  tags: string;
  created_at: number;
}

export interface TemplateBuildTable {
  id: string;
  template_id: string;
  team_id: string;
  /** JSON: the definition this build ran. */
  definition: string;
  status: string;
  error: string | null;
  /** JSON array: per step, whether it ran or came from the cache. */
  steps: string;
  /** The node running or having run it (its log lives there); null on a single host. */
  node_id: string | null;
  created_at: number;
  finished_at: number | null;
}

/** One named job that only one API replica runs at a time; the holder renews it before `expires_at`. */
export interface LeaseTable {
  name: string;
  holder: string;
  expires_at: number;
}

/** A team's active-sandbox slot held by a create or resume in flight (expires if its replica dies). */
export interface ActiveSlotClaimTable {
  id: string;
  team_id: string;
  expires_at: number;
}

/** Requests counted against one rate-limit key (a hash, never the API key itself) in its current window. */
export interface RateLimitTable {
  key: string;
  window_start: number;
  hits: number;
}

/** A snapshot creation admitted under the team's caps but not yet stored (expires if its replica dies). */
export interface SnapshotReservationTable {
  id: string;
  team_id: string;
  expires_at: number;
}
