import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Several hosts: the nodes that run sandboxes, and where each sandbox, snapshot and template build
 * lives. A single host leaves `node_id` null. A sandbox's vCPUs and memory are copied out of its
 * resources JSON so placement sums a node's load in one indexed query on both stores.
 */
export const nodes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('nodes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('region', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('vcpus', 'integer', (c) => c.notNull())
      .addColumn('memory_mib', 'integer', (c) => c.notNull())
      .addColumn('disk_mib', 'integer', (c) => c.notNull())
      .addColumn('max_sandboxes', 'integer', (c) => c.notNull())
      .addColumn('engines', 'text', (c) => c.notNull())
      .addColumn('labels', 'text', (c) => c.notNull())
      .addColumn('templates', 'text', (c) => c.notNull())
      .addColumn('sandboxes', 'integer', (c) => c.notNull())
      .addColumn('allocated_vcpus', 'integer', (c) => c.notNull())
      .addColumn('allocated_memory_mib', 'integer', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('registered_at', 'bigint', (c) => c.notNull())
      .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
      .addColumn('lost_at', 'bigint')
      .execute();
    await db.schema.alterTable('sandboxes').addColumn('node_id', 'text').execute();
    await db.schema
      .alterTable('sandboxes')
      .addColumn('vcpu_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('sandboxes')
      .addColumn('memory_mib', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('sandboxes_node_live').on('sandboxes').columns(['node_id', 'status']).where(sql.ref('deleted_at'), 'is', null).execute();
    await db.schema.alterTable('snapshots').addColumn('node_id', 'text').execute();
    await db.schema.alterTable('template_builds').addColumn('node_id', 'text').execute();
  },
};
