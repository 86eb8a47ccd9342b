import type { Db } from './db.ts';

/** A build asked for before its steps arrive (E2B's `POST /v3/templates`, then file uploads, then the steps). */
export interface BuildRequest {
  teamId: string;
  templateId: string;
  buildId: string;
  name: string;
  tags: string[];
  at: number;
}

type Row = { build_id: string; team_id: string; template_id: string; name: string; tags: string; created_at: number };

const toRequest = (r: Row): BuildRequest => ({
  teamId: r.team_id,
  templateId: r.template_id,
  buildId: r.build_id,
  name: r.name,
  tags: JSON.parse(r.tags) as string[],
  at: Number(r.created_at),
});

/** Open build requests, by build id. */
export class BuildRequestStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async insert(r: BuildRequest): Promise<void> {
    await this.db
      .insertInto('template_build_requests')
      .values({ build_id: r.buildId, team_id: r.teamId, template_id: r.templateId, name: r.name, tags: JSON.stringify(r.tags), created_at: r.at })
      .execute();
  }

  async get(buildId: string): Promise<BuildRequest | undefined> {
    const row = await this.db.selectFrom('template_build_requests').selectAll().where('build_id', '=', buildId).executeTakeFirst();
    return row && toRequest(row);
  }

  /** The team's oldest open request for a template id or a name. */
  async find(teamId: string, by: { templateId: string } | { name: string }): Promise<BuildRequest | undefined> {
    let q = this.db.selectFrom('template_build_requests').selectAll().where('team_id', '=', teamId);
    q = 'name' in by ? q.where('name', '=', by.name) : q.where('template_id', '=', by.templateId);
    const row = await q.orderBy('created_at').orderBy('build_id').executeTakeFirst();
    return row && toRequest(row);
  }

  async delete(buildId: string): Promise<void> {
    await this.db.deleteFrom('template_build_requests').where('build_id', '=', buildId).execute();
  }

  async deleteOlderThan(before: number): Promise<void> {
    await this.db.deleteFrom('template_build_requests').where('created_at', '<', before).execute();
  }
}
