import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { TemplateUploads } from '../src/services/templates/template-uploads.ts';
import { openDb } from '../src/store/db.ts';
import { type TemplateRecord, TemplateStore } from '../src/store/templates.ts';
import { BuildArchives } from '../src/templates/build-archives.ts';

/**
 * Build-context uploads are collected: those no live template's steps name go after a day unused (neither
 * written nor asked about), as do writes cut short; those named stay, since a template is rebuilt from its steps.
 */
let dir: string;
let db: Awaited<ReturnType<typeof openDb>>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-uploads-'));
  db = await openDb({ dataDir: dir });
});
after(async () => {
  await db?.destroy();
  await rm(dir, { recursive: true, force: true });
});

const DAY = 24 * 3600_000;
const hash = (c: string) => c.repeat(64);

function template(id: string, teamId: string, archives: string[], deletedAt: number | null): TemplateRecord {
  return {
    id,
    teamId,
    name: `t-${id.slice(0, 8)}`,
    definition: { base: 'platform/base', steps: [{ type: 'run', command: 'true' }, ...archives.map((a) => ({ type: 'archive', archive: a, src: '.', dest: '/x' }))], readyTimeoutS: 60, warmPool: 0 },
    status: 'ready',
    error: null,
    version: null,
    capture: null,
    latestBuildId: null,
    createdAt: 1,
    updatedAt: 1,
    deletedAt,
  };
}

test('collect removes what nothing names after a day unused, keeps what live templates name, and a look refreshes an upload', async () => {
  const store = new TemplateStore(db);
  await db.insertInto('teams').values({ id: 'team-a', name: 'a', limits: null, created_at: 1 }).execute();
  await store.insert(template('00000000-0000-4000-8000-000000000001', 'team-a', [hash('a')], null));
  await store.insert(template('00000000-0000-4000-8000-000000000002', 'team-a', [hash('b')], 5));
  const inUse = await store.archivesInUse();
  assert.deepEqual([...inUse], [`team-a/${hash('a')}`], 'only live templates name uploads');

  const archives = new BuildArchives(join(dir, 'uploads'));
  const uploads = new TemplateUploads(randomBytes(32), archives, 1 << 20);
  for (const c of ['a', 'b', 'c', 'd']) await archives.save('team-a', hash(c), Readable.from([Buffer.from(c)]), 1 << 20);
  await mkdir(join(archives.dir, 'team-a'), { recursive: true });
  await writeFile(join(archives.dir, 'team-a', '.tmp-cut'), 'half');
  const old = new Date(Date.now() - 2 * DAY);
  for (const name of [hash('a'), hash('b'), hash('d'), '.tmp-cut']) await utimes(join(archives.dir, 'team-a', name), old, old);
  // Asked about (E2B's client checks before it uploads): used just now.
  assert.equal(await uploads.present('team-a', hash('d')), true);

  assert.equal(await uploads.collect(inUse, Date.now()), 2);
  const left = (c: string) => existsSync(archives.path('team-a', hash(c)));
  assert.deepEqual(['a', 'b', 'c', 'd'].map(left), [true, false, true, true], 'named (a) and recent (c, d) stay; old and named only by a deleted template (b) goes');
  assert.equal(existsSync(join(archives.dir, 'team-a', '.tmp-cut')), false, 'a write cut short goes');
  assert.equal(await uploads.collect(inUse, Date.now() + 2 * DAY), 2, 'a day on, the unnamed ones go too');
  assert.deepEqual(['a', 'c', 'd'].map(left), [true, false, false]);
});
