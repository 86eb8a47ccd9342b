import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Names for builds of a template (E2B's tags): `latest` follows the newest ready build, others stay where they were put. */
export const templateTags: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('template_tags')
      .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id'))
      .addColumn('tag', 'text', (c) => c.notNull())
      .addColumn('build_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      // The version the build made (JSON): a tag starts sandboxes of its build after newer builds.
      .addColumn('version', 'text')
      .addPrimaryKeyConstraint('template_tags_pk', ['template_id', 'tag'])
      .execute();
  },
};
