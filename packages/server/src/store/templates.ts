import type { Selectable } from 'kysely';
import type { Db } from './db.ts';
import { appendResourceEvent, type ResourceEvent } from './resource-events.ts';
import type { TemplateBuildTable, TemplateTable, TemplateTagTable } from './schema.ts';

export type TemplateStatus = 'building' | 'ready' | 'failed';

/** What a template is declared as (the POST body, normalized). */
export interface TemplateDefinition {
  base: string;
  steps: unknown[];
  startCmd?: string;
  readyCmd?: string;
  readyTimeoutS: number;
  warmPool: number;
  /** The image the template is built from (then `base` is that reference too). */
  fromImage?: string;
  registryAuth?: { username: string; password_secret: string };
  useImageCmd?: boolean;
  /** The Dockerfile text the definition was read from. */
  dockerfile?: string;
  /** Steps from this index on skip the layer cache (no_cache: 0). */
  noCacheFrom?: number;
}

/** A built version: what its sandboxes start from. */
export interface TemplateVersion {
  /** Content key of the top layer (the whole chain), also the version's identity for warm pools. */
  key: string;
  baseRoot: string;
  /** Host dirs, top first. */
  layers: string[];
  env: Record<string, string>;
  workdir?: string;
  startCmd?: string;
  readyCmd?: string;
  readyTimeoutS: number;
  /** The build that made it (absent on versions older than tags). */
  buildId?: string;
}

/** A name for one build of a template, with the version that build made. */
export interface TemplateTag {
  tag: string;
  buildId: string;
  createdAt: number;
  version: TemplateVersion | null;
}

/** An engine capture of one version with its start_cmd running (gvisor); sandboxes are restored from it instead of booting. */
export interface TemplateCapture {
  /** The engine's snapshot id (SnapshotEngine), not a team's Snapshot resource. */
  id: string;
  /** TemplateVersion.key it was taken from. */
  versionKey: string;
}

export interface TemplateRecord {
  id: string;
  teamId: string;
  name: string;
  definition: TemplateDefinition;
  /** pending: a curated template not built yet (never stored). */
  status: TemplateStatus | 'pending';
  error: string | null;
  version: TemplateVersion | null;
  capture: TemplateCapture | null;
  latestBuildId: string | null;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
}

export interface BuildStepResult {
  index: number;
  type: string;
  result: 'ran' | 'cached' | 'failed' | 'pending' | 'config';
  duration_ms?: number;
}

export interface BuildRecord {
  id: string;
  templateId: string;
  teamId: string;
  definition: TemplateDefinition;
  status: TemplateStatus;
  error: string | null;
  steps: BuildStepResult[];
  createdAt: number;
  finishedAt: number | null;
}

function tagOf(r: Selectable<TemplateTagTable>): TemplateTag {
  return { tag: r.tag, buildId: r.build_id, createdAt: Number(r.created_at), version: r.version === null ? null : (JSON.parse(r.version) as TemplateVersion) };
}

function fromRow(r: Selectable<TemplateTable>, latestBuildId: string | null): TemplateRecord {
  return {
    id: r.id,
    teamId: r.team_id,
    name: r.name,
    definition: JSON.parse(r.definition),
    status: r.status as TemplateStatus,
    error: r.error,
    version: r.build === null ? null : JSON.parse(r.build),
    capture: r.capture === null ? null : JSON.parse(r.capture),
    latestBuildId,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    deletedAt: r.deleted_at === null ? null : Number(r.deleted_at),
  };
}

function buildFromRow(r: Selectable<TemplateBuildTable>): BuildRecord {
  return {
    id: r.id,
    templateId: r.template_id,
    teamId: r.team_id,
    definition: JSON.parse(r.definition),
    status: r.status as TemplateStatus,
    error: r.error,
    steps: JSON.parse(r.steps),
    createdAt: Number(r.created_at),
    finishedAt: r.finished_at === null ? null : Number(r.finished_at),
  };
}

export class TemplateStore {
  readonly db: Db;
  /** The node this process is: builds it runs are recorded there, and only its own are ended after a crash. Null: every row. */
  readonly node: string | null;
  constructor(db: Db, node: string | null = null) {
    this.db = db;
    this.node = node;
  }

  async #withLatest(rows: Selectable<TemplateTable>[]): Promise<TemplateRecord[]> {
    const out: TemplateRecord[] = [];
    for (const r of rows) {
      const b = await this.db.selectFrom('template_builds').select('id').where('template_id', '=', r.id).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
      out.push(fromRow(r, b?.id ?? null));
    }
    return out;
  }

  async get(id: string): Promise<TemplateRecord | undefined> {
    const row = await this.db.selectFrom('templates').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    return row && (await this.#withLatest([row]))[0];
  }

  async byName(teamId: string, name: string): Promise<TemplateRecord | undefined> {
    const row = await this.db.selectFrom('templates').selectAll().where('team_id', '=', teamId).where('name', '=', name).where('deleted_at', 'is', null).executeTakeFirst();
    return row && (await this.#withLatest([row]))[0];
  }

  async list(teamId: string): Promise<TemplateRecord[]> {
    const rows = await this.db.selectFrom('templates').selectAll().where('team_id', '=', teamId).where('deleted_at', 'is', null).orderBy('created_at', 'desc').execute();
    return this.#withLatest(rows);
  }

  /** Every live template of every team that keeps a warm pool. */
  async listPooled(): Promise<TemplateRecord[]> {
    const rows = await this.db.selectFrom('templates').selectAll().where('deleted_at', 'is', null).where('build', 'is not', null).execute();
    return (await this.#withLatest(rows)).filter((t) => t.definition.warmPool > 0);
  }

  /** The built version of every live template, and those its tags name: which of them a node holds files for. */
  async builtVersions(): Promise<TemplateVersion[]> {
    const rows = await this.db.selectFrom('templates').select('build').where('deleted_at', 'is', null).where('build', 'is not', null).execute();
    const tagged = await this.db
      .selectFrom('template_tags')
      .innerJoin('templates', 'templates.id', 'template_tags.template_id')
      .select('template_tags.version')
      .where('templates.deleted_at', 'is', null)
      .where('template_tags.version', 'is not', null)
      .execute();
    const versions = new Map<string, TemplateVersion>();
    for (const text of [...rows.map((r) => r.build!), ...tagged.map((r) => r.version!)]) {
      const v = JSON.parse(text) as TemplateVersion;
      versions.set(v.key, v);
    }
    return [...versions.values()];
  }

  /** The build-context uploads (`team/hash`) the steps of live templates name: a rebuild from the steps needs them. */
  async archivesInUse(): Promise<Set<string>> {
    const rows = await this.db.selectFrom('templates').select(['team_id', 'definition']).where('deleted_at', 'is', null).execute();
    const out = new Set<string>();
    for (const r of rows) {
      for (const step of (JSON.parse(r.definition) as TemplateDefinition).steps as { type?: string; archive?: string }[]) {
        if (step.type === 'archive' && step.archive) out.add(`${r.team_id}/${step.archive}`);
      }
    }
    return out;
  }

  async count(teamId: string): Promise<number> {
    const r = await this.db
      .selectFrom('templates')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', teamId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async insert(t: TemplateRecord): Promise<void> {
    await this.db
      .insertInto('templates')
      .values({
        id: t.id,
        team_id: t.teamId,
        name: t.name,
        definition: JSON.stringify(t.definition),
        status: t.status,
        error: t.error,
        build: t.version === null ? null : JSON.stringify(t.version),
        capture: null,
        created_at: t.createdAt,
        updated_at: t.updatedAt,
        deleted_at: t.deletedAt,
      })
      .execute();
  }

  /** Writes the row; `event` (template.built, template.failed) is appended to resource_events in the same transaction. */
  async save(t: TemplateRecord, event?: ResourceEvent): Promise<void> {
    if (!event) return this.#save(this.db, t);
    await this.db.transaction().execute(async (tx) => {
      await this.#save(tx, t);
      await appendResourceEvent(tx, { ...event, teamId: t.teamId, resourceType: 'template', resourceId: t.id });
    });
  }

  async #save(db: Db, t: TemplateRecord): Promise<void> {
    await db
      .updateTable('templates')
      .set({
        definition: JSON.stringify(t.definition),
        status: t.status,
        error: t.error,
        build: t.version === null ? null : JSON.stringify(t.version),
        updated_at: t.updatedAt,
        deleted_at: t.deletedAt,
      })
      .where('id', '=', t.id)
      .execute();
  }

  /** Set and cleared only here (save leaves it), so a build saving its template never races the capture. */
  async setCapture(templateId: string, capture: TemplateCapture | null): Promise<void> {
    await this.db
      .updateTable('templates')
      .set({ capture: capture === null ? null : JSON.stringify(capture) })
      .where('id', '=', templateId)
      .execute();
  }

  /** Live templates with a built version. */
  async builtIds(): Promise<string[]> {
    return (await this.db.selectFrom('templates').select('id').where('deleted_at', 'is', null).where('build', 'is not', null).execute()).map((r) => r.id);
  }

  /** Templates holding a capture, deleted ones included (their capture is still to be removed). */
  async withCapture(): Promise<{ id: string; deleted: boolean; capture: TemplateCapture }[]> {
    const rows = await this.db.selectFrom('templates').select(['id', 'deleted_at', 'capture']).where('capture', 'is not', null).execute();
    return rows.map((r) => ({ id: r.id, deleted: r.deleted_at !== null, capture: JSON.parse(r.capture!) as TemplateCapture }));
  }

  async insertBuild(b: BuildRecord): Promise<void> {
    await this.db
      .insertInto('template_builds')
      .values({
        id: b.id,
        template_id: b.templateId,
        team_id: b.teamId,
        definition: JSON.stringify(b.definition),
        status: b.status,
        error: b.error,
        steps: JSON.stringify(b.steps),
        node_id: this.node,
        created_at: b.createdAt,
        finished_at: b.finishedAt,
      })
      .execute();
  }

  async saveBuild(b: BuildRecord): Promise<void> {
    await this.db
      .updateTable('template_builds')
      .set({ status: b.status, error: b.error, steps: JSON.stringify(b.steps), finished_at: b.finishedAt })
      .where('id', '=', b.id)
      .execute();
  }

  async getBuild(templateId: string, buildId: string): Promise<BuildRecord | undefined> {
    const row = await this.db.selectFrom('template_builds').selectAll().where('template_id', '=', templateId).where('id', '=', buildId).executeTakeFirst();
    return row && buildFromRow(row);
  }

  /** Builds a crashed server left running: they end failed. */
  async unfinishedBuilds(): Promise<BuildRecord[]> {
    let q = this.db.selectFrom('template_builds').selectAll().where('status', '=', 'building');
    if (this.node !== null) q = q.where('node_id', '=', this.node);
    return (await q.execute()).map(buildFromRow);
  }

  /** Templates of a team with live sandboxes (delete is refused while any exist). */
  /** Points each tag at the build and its version (moving a tag that named another). */
  async putTags(templateId: string, buildId: string, version: TemplateVersion | null, tags: string[], now: number): Promise<void> {
    if (tags.length === 0) return;
    const json = version === null ? null : JSON.stringify(version);
    await this.db
      .insertInto('template_tags')
      .values(tags.map((tag) => ({ template_id: templateId, tag, build_id: buildId, created_at: now, version: json })))
      .onConflict((oc) =>
        oc.columns(['template_id', 'tag']).doUpdateSet((eb) => ({ build_id: eb.ref('excluded.build_id'), created_at: eb.ref('excluded.created_at'), version: eb.ref('excluded.version') })),
      )
      .execute();
  }

  async removeTags(templateId: string, tags: string[]): Promise<void> {
    if (tags.length === 0) return;
    await this.db.deleteFrom('template_tags').where('template_id', '=', templateId).where('tag', 'in', tags).execute();
  }

  async tags(templateId: string): Promise<TemplateTag[]> {
    const rows = await this.db.selectFrom('template_tags').selectAll().where('template_id', '=', templateId).orderBy('created_at').orderBy('tag').execute();
    return rows.map(tagOf);
  }

  async tag(templateId: string, tag: string): Promise<TemplateTag | undefined> {
    const row = await this.db.selectFrom('template_tags').selectAll().where('template_id', '=', templateId).where('tag', '=', tag).executeTakeFirst();
    return row && tagOf(row);
  }

  async liveSandboxCount(templateId: string): Promise<number> {
    const r = await this.db
      .selectFrom('sandboxes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('template_id', '=', templateId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
