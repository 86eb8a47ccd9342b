import type { Migration, MigrationProvider } from 'kysely/migration';
import { foundation } from './migrations/0001-foundation.ts';
import { teamsBilling } from './migrations/0002-teams-billing.ts';
import { network } from './migrations/0003-network.ts';
import { snapshots } from './migrations/0004-snapshots.ts';
import { templates } from './migrations/0005-templates.ts';
import { templateCaptures } from './migrations/0006-template-captures.ts';
import { failureReason } from './migrations/0007-failure-reason.ts';
import { replicaState } from './migrations/0008-replica-state.ts';
import { liveSandboxIndex } from './migrations/0009-live-sandbox-index.ts';
import { consoleSessions } from './migrations/0010-console-sessions.ts';
import { nodes } from './migrations/0011-nodes.ts';
import { regions } from './migrations/0012-regions.ts';
import { replicaCounters } from './migrations/0013-replica-counters.ts';
import { metadataListOrder } from './migrations/0014-metadata-list-order.ts';
import { authEpoch } from './migrations/0015-auth-epoch.ts';
import { nodeMoves } from './migrations/0016-node-moves.ts';
import { auditLog } from './migrations/0017-audit-log.ts';
import { webhooks } from './migrations/0018-webhooks.ts';
import { volumes } from './migrations/0020-volumes.ts';
import { sshKeys } from './migrations/0023-ssh-keys.ts';
import { diskOnlyPause } from './migrations/0024-disk-only-pause.ts';
import { sandboxMoves } from './migrations/0025-sandbox-moves.ts';
import { fileMetadata } from './migrations/0026-file-metadata.ts';
import { templateTags } from './migrations/0027-template-tags.ts';
import { templateBuildRequests } from './migrations/0028-template-build-requests.ts';

/**
 * Versioned schema changes, applied in name order, one file each. Written with Kysely's
 * schema builder and portable column types so a PostgreSQL dialect can run them too.
 * Never edit a released migration: add a new one.
 */
const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_teams_billing': teamsBilling,
  '0003_network': network,
  '0004_snapshots': snapshots,
  '0005_templates': templates,
  '0006_template_captures': templateCaptures,
  '0007_failure_reason': failureReason,
  '0008_replica_state': replicaState,
  '0009_live_sandbox_index': liveSandboxIndex,
  '0010_console_sessions': consoleSessions,
  '0011_nodes': nodes,
  '0012_regions': regions,
  '0013_replica_counters': replicaCounters,
  '0014_metadata_list_order': metadataListOrder,
  '0015_auth_epoch': authEpoch,
  '0016_node_moves': nodeMoves,
  '0017_audit_log': auditLog,
  '0018_webhooks': webhooks,
  '0020_volumes': volumes,
  '0023_ssh_keys': sshKeys,
  '0024_disk_only_pause': diskOnlyPause,
  '0025_sandbox_moves': sandboxMoves,
  '0026_file_metadata': fileMetadata,
  '0027_template_tags': templateTags,
  '0028_template_build_requests': templateBuildRequests,
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
