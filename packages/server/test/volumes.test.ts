import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Api, CLI, ServerProcess } from './helpers/server-process.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function assertEnvelope(res: { status: number; body: any }, status: number, code: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body?.error?.code, code, JSON.stringify(res.body));
  assert.equal(typeof res.body.error.message, 'string');
}

async function exec(api: Api, id: string, command: string): Promise<{ stdout: string; stderr: string; exit_code: number }> {
  const res = await api.post(`/sandboxes/${id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** Deletes what a test server still holds (sandboxes, then the volumes they mounted), then stops it. */
async function removeAll(api: Api, srv: ServerProcess | undefined): Promise<void> {
  for (const sb of (await api.get('/sandboxes?limit=1000')).body.sandboxes ?? []) await api.del(`/sandboxes/${sb.id}`);
  for (const v of (await api.get('/volumes?limit=1000')).body.volumes ?? []) await api.del(`/volumes/${v.id}`);
  await srv?.stop();
}

for (const driver of (process.env.VOLUME_TEST_DRIVERS ?? 'container,gvisor').split(',')) {
  describe(`volumes on the ${driver} driver`, () => {
    let srv: ServerProcess;
    let api: Api;
    before(async () => {
      srv = await ServerProcess.start({ SANDPIT_DRIVER: driver, SANDPIT_MAX_VOLUMES: '3' });
      api = new Api(srv.url, srv.key);
    });
    after(() => removeAll(api, srv));

    test('create, get by id and name, list in pages, grow, bad input, another team', async () => {
      const made = await api.post('/volumes', { name: 'data', size_mib: 64 });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const vol = made.body;
      assert.match(vol.id, UUID);
      assert.equal(vol.name, 'data');
      assert.equal(vol.size_mib, 64);
      assert.deepEqual(vol.mounted_by, []);
      assert.equal(typeof vol.used_bytes, 'number');
      assert.ok((await stat(join(srv.dataDir, 'volumes', vol.id))).isDirectory(), 'its disk is on the host');

      assert.equal((await api.get(`/volumes/${vol.id}`)).body.name, 'data');
      assert.equal((await api.get('/volumes/data')).body.id, vol.id);
      assertEnvelope(await api.post('/volumes', { name: 'data', size_mib: 64 }), 409, 'conflict');
      assertEnvelope(await api.post('/volumes', { name: vol.id, size_mib: 64 }), 400, 'bad_request');
      assertEnvelope(await api.post('/volumes', { name: 'x', size_mib: 0 }), 400, 'bad_request');
      assertEnvelope(await api.post('/volumes', { name: '../x', size_mib: 1 }), 400, 'bad_request');
      assertEnvelope(await api.get('/volumes/nope'), 404, 'not_found');

      const second = (await api.post('/volumes', { name: 'second', size_mib: 32 })).body;
      const page1 = await api.get('/volumes?limit=1');
      assert.equal(page1.body.volumes.length, 1);
      assert.ok(page1.body.next_cursor);
      const page2 = await api.get(`/volumes?limit=1&cursor=${page1.body.next_cursor}`);
      assert.deepEqual([page1.body.volumes[0].id, page2.body.volumes[0].id].sort(), [vol.id, second.id].sort());
      assertEnvelope(await api.get('/volumes?limit=0'), 400, 'bad_request');

      assert.equal((await api.patch('/volumes/second', { size_mib: 48 })).body.size_mib, 48);
      assertEnvelope(await api.patch('/volumes/second', { size_mib: 16 }), 400, 'bad_request');
      assert.equal((await api.get('/volumes/second')).body.size_mib, 48, 'a refused shrink changes nothing');
      assert.equal((await api.post('/volumes', { name: 'third', size_mib: 1 })).status, 201);
      assertEnvelope(await api.post('/volumes', { name: 'fourth', size_mib: 1 }), 429, 'too_many_volumes');

      const cli = spawnSync(process.execPath, [CLI, 'team', 'create', `other-${driver}`, '--json'], {
        env: { ...process.env, SANDPIT_DATA_DIR: srv.dataDir, SANDPIT_DATABASE_URL: srv.env.SANDPIT_DATABASE_URL ?? '' },
        encoding: 'utf8',
      });
      assert.equal(cli.status, 0, cli.stderr);
      const other = new Api(srv.url, JSON.parse(cli.stdout).api_key);
      assertEnvelope(await other.get(`/volumes/${vol.id}`), 404, 'not_found');
      assertEnvelope(await other.del(`/volumes/${vol.id}`), 404, 'not_found');
      assertEnvelope(await other.post('/sandboxes', { volumes: [{ volume: vol.id, path: '/data' }] }), 404, 'not_found');
      assert.deepEqual((await other.get('/volumes')).body.volumes, []);

      for (const name of ['second', 'third']) assert.equal((await api.del(`/volumes/${name}`)).status, 204);

      // Metered as storage on the team's usage (no sandbox exists yet), never as a sandbox's line.
      const team = (await api.get('/me')).body.team_id;
      let storage = 0;
      for (let i = 0; i < 50 && storage === 0; i++) {
        await new Promise((r) => setTimeout(r, 200));
        storage = (await api.get(`/teams/${team}/billing/usage`)).body.storage_mib_seconds ?? 0;
      }
      assert.ok(storage > 0, 'volume storage is metered');
      assert.deepEqual((await api.get(`/teams/${team}/billing/usage/sandboxes`)).body.sandboxes, []);
    });

    test('mounted by two sandboxes: owned by user, shared writes, read-only, quota, pause/resume, delete refused then final', async () => {
      const vol = (await api.get('/volumes/data')).body;
      for (const path of ['/a/../b', 'rel', '/proc/x', '/data/']) {
        assertEnvelope(await api.post('/sandboxes', { volumes: [{ volume: 'data', path }] }), 400, 'bad_request');
      }
      assertEnvelope(await api.post('/sandboxes', { volumes: [{ volume: 'missing', path: '/data' }] }), 404, 'not_found');

      const a = await api.post('/sandboxes', { volumes: [{ volume: 'data', path: '/data' }] });
      assert.equal(a.status, 201, JSON.stringify(a.body));
      const b = await api.post('/sandboxes', { volumes: [{ volume: vol.id, path: '/mnt/shared', read_only: true }] });
      assert.equal(b.status, 201, JSON.stringify(b.body));
      const [ida, idb] = [a.body.id, b.body.id];

      assert.equal((await exec(api, ida, 'stat -c %U /data')).stdout.trim(), 'user', "the volume's root is the sandbox user's");
      const wrote = await exec(api, ida, 'echo hello > /data/note && mkdir -p /data/dir && echo x > /data/dir/y && cat /data/note');
      assert.equal(wrote.exit_code, 0, wrote.stderr);
      assert.equal((await exec(api, idb, 'cat /mnt/shared/note')).stdout, 'hello\n', "another sandbox sees one's writes");
      const refused = await exec(api, idb, 'echo no > /mnt/shared/other');
      assert.notEqual(refused.exit_code, 0);
      assert.match(refused.stderr, /Read-only file system/);
      await exec(api, ida, 'echo again >> /data/note');
      assert.equal((await exec(api, idb, 'cat /mnt/shared/note')).stdout, 'hello\nagain\n', 'writes made after the first read are seen too');

      const full = await exec(api, ida, 'dd if=/dev/zero of=/data/big bs=1M count=100 conv=fsync 2>&1; sync');
      assert.match(full.stdout, /quota exceeded|No space left/, full.stdout);
      await exec(api, ida, 'rm -f /data/big');

      assert.deepEqual((await api.get(`/volumes/${vol.id}`)).body.mounted_by.sort(), [ida, idb].map((id: string) => id.replace(/^sb-[a-z0-9]+-/, '')).sort());
      assertEnvelope(await api.del(`/volumes/${vol.id}`), 409, 'conflict');

      assert.equal((await api.post(`/sandboxes/${ida}/pause`)).status, 200);
      assert.equal((await api.post(`/sandboxes/${ida}/resume`)).status, 200);
      assert.equal((await exec(api, ida, 'cat /data/dir/y && echo after > /data/after')).stdout, 'x\n', 'the mount survives pause/resume');
      assert.equal((await exec(api, idb, 'cat /mnt/shared/after')).stdout, 'after\n');

      assert.equal((await api.del(`/sandboxes/${ida}`)).status, 204);
      assertEnvelope(await api.del(`/volumes/data`), 409, 'conflict');
      assert.equal((await api.del(`/sandboxes/${idb}`)).status, 204);
      assert.equal((await api.del('/volumes/data')).status, 204);
      await assert.rejects(stat(join(srv.dataDir, 'volumes', vol.id)), /ENOENT/, 'its bytes are gone from the host');
      assertEnvelope(await api.get(`/volumes/${vol.id}`), 404, 'not_found');
    });

    test('a restart of the service loses no volume and no mount', async () => {
      await api.post('/volumes', { name: 'kept', size_mib: 16 });
      const sb = (await api.post('/sandboxes', { volumes: [{ volume: 'kept', path: '/kept' }] })).body;
      await exec(api, sb.id, 'echo before > /kept/f');
      await srv.kill9();
      await srv.launch();
      assert.equal((await exec(api, sb.id, 'cat /kept/f && echo after >> /kept/f && cat /kept/f')).stdout, 'before\nbefore\nafter\n');
      assert.equal((await api.get('/volumes/kept')).body.mounted_by.length, 1);
      assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
      assert.equal((await api.del('/volumes/kept')).status, 204);
    });

    if (driver === 'gvisor') {
      test('a snapshot records the mounts, not the contents; a fork mounts the same volume', async () => {
        await api.post('/volumes', { name: 'forked', size_mib: 16 });
        const sb = (await api.post('/sandboxes', { volumes: [{ volume: 'forked', path: '/work' }] })).body;
        await exec(api, sb.id, 'echo one > /work/f');
        const snap = await api.post(`/sandboxes/${sb.id}/snapshot`, {});
        assert.equal(snap.status, 201, JSON.stringify(snap.body));
        await exec(api, sb.id, 'echo two > /work/f');
        const fork = await api.post('/sandboxes', { from_snapshot: snap.body.id });
        assert.equal(fork.status, 201, JSON.stringify(fork.body));
        assert.equal((await exec(api, fork.body.id, 'cat /work/f')).stdout, 'two\n', 'the live volume, not a copy taken with the snapshot');
        await exec(api, fork.body.id, 'echo three > /work/f');
        assert.equal((await exec(api, sb.id, 'cat /work/f')).stdout, 'three\n');
        assert.equal((await api.get('/volumes/forked')).body.mounted_by.length, 2);
        assertEnvelope(await api.post('/sandboxes', { from_snapshot: snap.body.id, volumes: [{ volume: 'forked', path: '/x' }] }), 400, 'bad_request');
        for (const id of [sb.id, fork.body.id]) assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
        assert.equal((await api.del(`/snapshots/${snap.body.id}`)).status, 204);
        assert.equal((await api.del('/volumes/forked')).status, 204);
      });
    }

    test('a path through a symlink of the template never reaches the host', async () => {
      const v = (await api.post('/volumes', { name: 'sym', size_mib: 8 })).body;
      // /bin is a symlink to usr/bin in the base template (merged /usr).
      const res = await api.post('/sandboxes', { volumes: [{ volume: 'sym', path: '/bin/vol' }] });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.deepEqual((await api.get(`/volumes/${v.id}`)).body.mounted_by, []);
      assert.equal((await api.del('/volumes/sym')).status, 204);
    });
  });
}

for (const driver of ['container', 'gvisor']) {
  describe(`volumes mounted into a pre-started ${driver} sandbox`, () => {
    let srv: ServerProcess;
    let api: Api;
    before(async () => {
      srv = await ServerProcess.start({ SANDPIT_DRIVER: driver, SANDPIT_WARM_POOL: '1' });
      api = new Api(srv.url, srv.key);
    });
    after(() => removeAll(api, srv));

    /** Waits for the pool's sandbox, and answers the engine's sandboxes then (the pooled one among them). */
    async function pooled(): Promise<Set<string>> {
      const deadline = Date.now() + 60_000;
      while ((await api.get('/info')).body.warm_pool?.ready !== 1) {
        if (Date.now() > deadline) throw new Error('the warm pool never filled');
        await new Promise((r) => setTimeout(r, 200));
      }
      return new Set(await readdir(join(srv.dataDir, ...(driver === 'gvisor' ? ['gvisor'] : []), 'sandboxes')));
    }

    test('a create with volumes takes the pre-started sandbox and mounts them into it running: owned by user, shared, read-only', async () => {
      const vol = (await api.post('/volumes', { name: 'warm', size_mib: 16 })).body;
      let held = await pooled();
      const a = await api.post('/sandboxes', { volumes: [{ volume: 'warm', path: '/data' }] });
      assert.equal(a.status, 201, JSON.stringify(a.body));
      assert.ok(held.has(a.body.id.replace(/^sb-[a-z0-9]+-/, '')), 'the sandbox is the one the pool had started');
      assert.equal((await exec(api, a.body.id, 'stat -c %U /data')).stdout.trim(), 'user');
      const wrote = await exec(api, a.body.id, 'echo warm > /data/f && cat /data/f');
      assert.deepEqual([wrote.exit_code, wrote.stdout], [0, 'warm\n'], wrote.stderr);
      assert.equal((await stat(join(srv.dataDir, 'volumes', vol.id, 'f'))).uid, 1000, "on disk the file is the sandbox user's");

      held = await pooled();
      const b = await api.post('/sandboxes', { volumes: [{ volume: vol.id, path: '/mnt/ro/deep', read_only: true }] });
      assert.equal(b.status, 201, JSON.stringify(b.body));
      assert.ok(held.has(b.body.id.replace(/^sb-[a-z0-9]+-/, '')), 'the second also came from the pool');
      assert.equal((await exec(api, b.body.id, 'cat /mnt/ro/deep/f')).stdout, 'warm\n');
      const refused = await exec(api, b.body.id, 'echo no > /mnt/ro/deep/g');
      assert.match(refused.stderr, /Read-only file system/);
      assert.deepEqual((await api.get('/volumes/warm')).body.mounted_by.sort(), [a.body.id, b.body.id].map((id: string) => id.replace(/^sb-[a-z0-9]+-/, '')).sort());

      if (driver === 'gvisor') {
        // Paused, then the service killed and the volume's bind on the host gone (as after a host restart):
        // the resume binds it again before the restore, and the sandbox finds its mount where it was.
        assert.equal((await api.post(`/sandboxes/${a.body.id}/pause`)).status, 200);
        await srv.kill9();
        const slot = join(srv.dataDir, 'gvisor', 'sandboxes', a.body.id.replace(/^sb-[a-z0-9]+-/, ''), 'volumes', '0');
        assert.equal(spawnSync('umount', [slot]).status, 0, `the slot ${slot} was bound on the host`);
        await srv.launch();
        assert.equal((await api.post(`/sandboxes/${a.body.id}/resume`)).status, 200);
        assert.equal((await exec(api, a.body.id, 'cat /data/f && echo again >> /data/f && echo ok')).stdout, 'warm\nok\n');
        assert.equal((await exec(api, b.body.id, 'tail -1 /mnt/ro/deep/f')).stdout, 'again\n');
      }

      await pooled();
      assertEnvelope(await api.post('/sandboxes', { volumes: [{ volume: 'missing', path: '/data' }] }), 404, 'not_found');
      for (const sb of [a.body, b.body]) assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
      assert.equal((await api.del('/volumes/warm')).status, 204);
      await assert.rejects(stat(join(srv.dataDir, 'volumes', vol.id)), /ENOENT/);
    });
  });
}
