import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openDb } from '../src/store/db.ts';
import { FileMetadataStore } from '../src/store/file-metadata.ts';
import { createDatabase, PostgresCluster } from './helpers/postgres.ts';

/**
 * E2B file metadata as the store keeps it, on both dialects: a rename carries a directory's files'
 * metadata and nothing that only shares a prefix; LIKE's wildcards in names match nothing else.
 */
let dir: string;
let pg: PostgresCluster;
const dbs: { name: string; store: FileMetadataStore; close: () => Promise<void> }[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-file-metadata-'));
  const sqlite = await openDb({ dataDir: dir });
  dbs.push({ name: 'sqlite', store: new FileMetadataStore(sqlite), close: () => sqlite.destroy() });
  pg = await PostgresCluster.start();
  const database = await createDatabase(pg.adminUrl);
  const postgres = await openDb({ dataDir: dir, databaseUrl: database.url });
  dbs.push({ name: 'postgres', store: new FileMetadataStore(postgres), close: async () => (await postgres.destroy(), await database.drop()) });
});

after(async () => {
  for (const d of dbs) await d.close();
  await pg?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('set, overwrite, move a directory, remove; prefixes and wildcards match only what is beneath', async () => {
  for (const { name, store } of dbs) {
    const paths = ['/d/a', '/d/sub/b', '/d_x/c', '/d%/e', '/dd/f'];
    for (const p of paths) await store.set('sb1', p, { at: p });
    await store.set('sb2', '/d/a', { other: 'sandbox' });
    await store.set('sb1', '/d/a', { at: '/d/a', again: 'yes' });
    await store.set('sb1', '/dd/f', undefined);
    await store.move('sb1', '/d', '/moved');
    const got = await store.get('sb1', ['/d/a', '/d/sub/b', '/moved/a', '/moved/sub/b', '/d_x/c', '/d%/e', '/dd/f']);
    assert.deepEqual(Object.fromEntries(got), { '/moved/a': { at: '/d/a', again: 'yes' }, '/moved/sub/b': { at: '/d/sub/b' }, '/d_x/c': { at: '/d_x/c' }, '/d%/e': { at: '/d%/e' } }, name);
    await store.remove('sb1', '/moved');
    await store.remove('sb1', '/d_');
    assert.deepEqual([...(await store.get('sb1', ['/moved/a', '/moved/sub/b', '/d_x/c', '/d%/e'])).keys()].sort(), ['/d%/e', '/d_x/c'], name);
    assert.deepEqual(Object.fromEntries(await store.get('sb2', ['/d/a'])), { '/d/a': { other: 'sandbox' } }, name);
  }
});
