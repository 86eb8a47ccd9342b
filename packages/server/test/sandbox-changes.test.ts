import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Api, CLI, ServerProcess } from './helpers/server-process.ts';

function assertEnvelope(res: { status: number; body: any }, status: number, code: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body?.error?.code, code, JSON.stringify(res.body));
}

async function exec(api: Api, id: string, command: string): Promise<string> {
  const res = await api.post(`/sandboxes/${id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.exit_code, 0, `${command}: ${res.body.stderr}`);
  return res.body.stdout;
}

async function allChanges(api: Api, id: string, query = ''): Promise<{ path: string; kind: string; type: string; size: number }[]> {
  const res = await api.get(`/sandboxes/${id}/changes?limit=1000${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.changes;
}

/** In a sandbox: an added file and directory, a template file modified and one deleted, a directory removed and made again. */
const EDITS = ['mkdir -p /home/user/w/sub', 'printf "one\\ntwo\\n" > /home/user/w/a.txt', 'printf "x" > /home/user/w/sub/b.bin', 'ln -s a.txt /home/user/w/link'].join(' && ');

for (const driver of (process.env.CHANGES_TEST_DRIVERS ?? 'container,gvisor').split(',')) {
  describe(`sandbox changes on the ${driver} driver`, () => {
    let srv: ServerProcess;
    let api: Api;
    before(async () => {
      srv = await ServerProcess.start({ SANDPIT_DRIVER: driver });
      api = new Api(srv.url, srv.key);
    });
    after(async () => {
      for (const sb of (await api.get('/sandboxes?limit=1000')).body.sandboxes ?? []) await api.del(`/sandboxes/${sb.id}`);
      for (const s of (await api.get('/snapshots?limit=1000')).body.snapshots ?? []) await api.del(`/snapshots/${s.id}`);
      await srv?.stop();
    });

    test('lists added, modified and deleted files in pages, by prefix, with a diff of one', async () => {
      const sb = (await api.post('/sandboxes', {})).body;
      assert.ok(sb.id, JSON.stringify(sb));
      assert.deepEqual(await allChanges(api, sb.id), [], 'a new sandbox has no changes (what the platform writes into its layer is none)');
      await exec(api, sb.id, `${EDITS} && sudo sh -c 'echo hello > /etc/motd && rm /etc/issue && rm -rf /opt && mkdir /opt && echo n > /opt/new'`);
      const changes = await allChanges(api, sb.id);
      const byPath = new Map(changes.map((c) => [c.path, c]));
      assert.deepEqual(byPath.get('/home/user/w/a.txt'), { path: '/home/user/w/a.txt', kind: 'added', type: 'file', size: 8 });
      assert.equal(byPath.get('/home/user/w/sub')?.kind, 'added');
      assert.equal(byPath.get('/home/user/w/sub/b.bin')?.size, 1);
      assert.equal(byPath.get('/home/user/w/link')?.type, 'symlink');
      assert.equal(byPath.get('/etc/motd')?.kind, 'modified');
      assert.equal(byPath.get('/etc/issue')?.kind, 'deleted');
      assert.equal(byPath.get('/opt/new')?.kind, 'added');
      assert.ok(![...byPath.keys()].includes('/etc/hostname'), 'files the platform writes are not changes');
      const sorted = changes.map((c) => c.path);
      assert.deepEqual(sorted, [...sorted].sort(), 'sorted by path');

      const under = await allChanges(api, sb.id, '&path=/home/user/w');
      assert.deepEqual(
        under.map((c) => c.path),
        ['/home/user/w', '/home/user/w/a.txt', '/home/user/w/link', '/home/user/w/sub', '/home/user/w/sub/b.bin'].filter((p) => under.some((c) => c.path === p)),
      );
      assert.ok(under.every((c) => c.path.startsWith('/home/user/w')));
      assert.equal(under.filter((c) => c.path.startsWith('/home/user/w/')).length, 4);

      const all = await allChanges(api, sb.id);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await api.get(`/sandboxes/${sb.id}/changes?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(page.status, 200, JSON.stringify(page.body));
        assert.ok(page.body.changes.length <= 2);
        seen.push(...page.body.changes.map((c: { path: string }) => c.path));
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.deepEqual(
        seen,
        all.map((c) => c.path),
        'pages cover the list once',
      );
      // The pages of one listing are of the moment of its first page; the next listing sees what came since.
      const first = await api.get(`/sandboxes/${sb.id}/changes?limit=1`);
      await exec(api, sb.id, 'touch /home/user/zz-later');
      const rest: string[] = [];
      for (let c: string | undefined = first.body.next_cursor; c; ) {
        const page = await api.get(`/sandboxes/${sb.id}/changes?limit=1000&cursor=${c}`);
        rest.push(...page.body.changes.map((x: { path: string }) => x.path));
        c = page.body.next_cursor;
      }
      assert.ok(!rest.includes('/home/user/zz-later'), 'a change made while paging shows from the next listing');
      assert.ok((await allChanges(api, sb.id)).some((c) => c.path === '/home/user/zz-later'));
      await exec(api, sb.id, 'rm /home/user/zz-later');
      assert.deepEqual((await api.get(`/sandboxes/${sb.id}/changes`)).body.base, { kind: 'template', id: sb.template_id });

      const diff = await api.get(`/sandboxes/${sb.id}/changes?diff=/etc/motd`);
      assert.equal(diff.status, 200, String(diff.body));
      assert.match(String(diff.body), /^--- a\/etc\/motd/m);
      assert.match(String(diff.body), /^\+hello$/m);
      const added = String((await api.get(`/sandboxes/${sb.id}/changes?diff=/home/user/w/a.txt`)).body);
      assert.match(added, /^\+one\n\+two$/m);
      assert.match(String((await api.get(`/sandboxes/${sb.id}/changes?diff=/etc/issue`)).body), /^\+\+\+ \/dev\/null/m);

      assertEnvelope(await api.get(`/sandboxes/${sb.id}/changes?diff=/home/user/w/sub`), 400, 'bad_request');
      assertEnvelope(await api.get(`/sandboxes/${sb.id}/changes?diff=/etc/passwd`), 404, 'not_found');
      assertEnvelope(await api.get(`/sandboxes/${sb.id}/changes?path=relative`), 400, 'bad_request');
      assertEnvelope(await api.get(`/sandboxes/${sb.id}/changes?limit=0`), 400, 'bad_request');
      assertEnvelope(await api.get(`/sandboxes/${sb.id}/changes?cursor=xyz`), 400, 'bad_request');
      // A symlink in the layer leading out of it is never followed on the host.
      await exec(api, sb.id, 'ln -s / /home/user/w/root');
      assert.deepEqual(await allChanges(api, sb.id, '&path=/home/user/w/root/etc'), []);
      assertEnvelope(await api.get(`/sandboxes/${sb.id}/changes?diff=/home/user/w/root/etc/passwd`), 404, 'not_found');
      assertEnvelope(await api.get('/sandboxes/00000000-0000-4000-8000-000000000000/changes'), 404, 'not_found');
      await api.del(`/sandboxes/${sb.id}`);
    });

    test('applies one sandbox changes to another of the same base, reporting conflicts', async () => {
      const a = (await api.post('/sandboxes', {})).body;
      const b = (await api.post('/sandboxes', {})).body;
      await exec(api, a.id, `${EDITS} && echo mine > /home/user/clash && echo same > /home/user/same && sudo rm /etc/issue`);
      await exec(api, b.id, 'echo theirs > /home/user/clash && echo same > /home/user/same');

      const res = await api.post(`/sandboxes/${b.id}/changes/apply`, { from: a.id });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const applied = new Map(res.body.applied.map((x: { path: string; kind: string }) => [x.path, x.kind]));
      assert.equal(applied.get('/home/user/w/a.txt'), 'added');
      assert.equal(applied.get('/etc/issue'), 'deleted');
      assert.deepEqual(res.body.conflicts, [{ path: '/home/user/clash', kind: 'added', here: { path: '/home/user/clash', kind: 'added' } }]);
      assert.deepEqual(res.body.skipped, [{ path: '/home/user/w/link', reason: 'a symlink' }]);
      assert.ok(!applied.has('/home/user/same'), 'the same change on both sides is neither applied nor a conflict');

      // The running target sees the files at once; its own conflicting change stays.
      assert.equal(await exec(api, b.id, 'cat /home/user/w/a.txt /home/user/w/sub/b.bin /home/user/clash; test -e /etc/issue || echo gone'), 'one\ntwo\nxtheirs\ngone\n');
      assert.equal((await exec(api, b.id, 'stat -c %U /home/user/w/a.txt')).trim(), 'user', "a user's file stays the user's");

      const only = await api.post(`/sandboxes/${b.id}/changes/apply`, { from: a.id, paths: ['/home/user/w/sub'] });
      assert.equal(only.status, 200, JSON.stringify(only.body));
      assert.deepEqual(only.body.applied, [], 'already applied: nothing to do, and no conflict');
      assert.deepEqual(only.body.conflicts, []);

      assertEnvelope(await api.post(`/sandboxes/${b.id}/changes/apply`, { from: b.id }), 400, 'bad_request');
      assertEnvelope(await api.post(`/sandboxes/${b.id}/changes/apply`, { from: a.id, paths: ['relative'] }), 400, 'bad_request');
      assertEnvelope(await api.post(`/sandboxes/${b.id}/changes/apply`, {}), 400, 'bad_request');
      assertEnvelope(await api.post(`/sandboxes/${b.id}/changes/apply`, { from: '00000000-0000-4000-8000-000000000000' }), 404, 'not_found');

      // Not spawnSync: a blocked event loop misses the server closing idle keep-alive connections, and the next request fails on one.
      const cli = await promisify(execFile)(process.execPath, [CLI, 'team', 'create', `other-${driver}`, '--json'], {
        env: { ...process.env, SANDPIT_DATA_DIR: srv.dataDir, SANDPIT_DATABASE_URL: srv.env.SANDPIT_DATABASE_URL ?? '' },
        encoding: 'utf8',
      });
      const other = new Api(srv.url, JSON.parse(cli.stdout).api_key);
      assertEnvelope(await other.get(`/sandboxes/${a.id}/changes`), 404, 'not_found');
      const theirs = (await other.post('/sandboxes', {})).body;
      assertEnvelope(await other.post(`/sandboxes/${theirs.id}/changes/apply`, { from: a.id }), 404, 'not_found');
      assertEnvelope(await api.post(`/sandboxes/${b.id}/changes/apply`, { from: theirs.id }), 404, 'not_found');
      await other.del(`/sandboxes/${theirs.id}`);

      const audit = await api.get(`/audit-log?action=sandbox.changes.apply&resource_id=${b.id}`);
      assert.ok(audit.body.entries.length > 0 && audit.body.entries.every((e: { resource: { id: string } }) => e.resource.id === b.id), 'apply is in the audit log');
      await Promise.all([api.del(`/sandboxes/${a.id}`), api.del(`/sandboxes/${b.id}`)]);
    });

    test('a fork lists changes against its snapshot; other bases are refused', async (t) => {
      const src = (await api.post('/sandboxes', {})).body;
      await exec(api, src.id, 'echo before > /home/user/kept && echo old > /home/user/edited && echo x > /home/user/dropped');
      const snap = await api.post(`/sandboxes/${src.id}/snapshot`, {});
      if (snap.status === 503) {
        await api.del(`/sandboxes/${src.id}`);
        return t.skip('this engine does not take snapshots');
      }
      assert.ok(snap.status === 201 || snap.status === 202, JSON.stringify(snap.body));
      for (;;) {
        const s = await api.get(`/snapshots/${snap.body.id}`);
        if (s.body.status === 'ready') break;
        assert.notEqual(s.body.status, 'failed');
        await new Promise((r) => setTimeout(r, 100));
      }
      const fork = (await api.post('/sandboxes', { from_snapshot: snap.body.id })).body;
      const twin = (await api.post('/sandboxes', { from_snapshot: snap.body.id })).body;
      assert.ok(fork.id && twin.id, JSON.stringify([fork, twin]));
      await exec(api, fork.id, 'echo new > /home/user/edited && rm /home/user/dropped && echo n > /home/user/added');
      const listed = await api.get(`/sandboxes/${fork.id}/changes?path=/home/user`);
      assert.deepEqual(listed.body.base, { kind: 'snapshot', id: snap.body.id });
      const kinds = Object.fromEntries(listed.body.changes.map((c: { path: string; kind: string }) => [c.path, c.kind]));
      assert.equal(kinds['/home/user/edited'], 'modified');
      assert.equal(kinds['/home/user/dropped'], 'deleted');
      assert.equal(kinds['/home/user/added'], 'added');
      assert.equal(kinds['/home/user/kept'], undefined, "the snapshot's own files are the base");
      assert.match(String((await api.get(`/sandboxes/${fork.id}/changes?diff=/home/user/edited`)).body), /^-old\n\+new$/m);

      const res = await api.post(`/sandboxes/${twin.id}/changes/apply`, { from: fork.id });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(await exec(api, twin.id, 'cat /home/user/edited /home/user/added; test -e /home/user/dropped || echo gone'), 'new\nn\ngone\n');
      assertEnvelope(await api.post(`/sandboxes/${src.id}/changes/apply`, { from: fork.id }), 409, 'conflict');
      await Promise.all([fork, twin, src].map((s) => api.del(`/sandboxes/${s.id}`)));
    });
  });
}
