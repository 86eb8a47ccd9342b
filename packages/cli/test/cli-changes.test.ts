import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Api, ServerProcess } from '../../server/test/helpers/server-process.ts';
import { runCli } from './helpers/run-cli.ts';

describe('sandpit sandbox changes and apply-changes against a real server (container driver)', () => {
  let server: ServerProcess;
  let api: Api;
  let a: string;
  let b: string;

  const sandpit = (args: string[]) => runCli(server, args);

  const ok = async (args: string[]) => {
    const r = await sandpit(args);
    assert.equal(r.code, 0, `sandpit ${args.join(' ')} failed:\n${r.stderr}`);
    return r;
  };
  const json = async (args: string[]) => JSON.parse((await ok([...args, '--json'])).stdout);
  /** A failure: exit code 1 and one line naming the API's status and code. */
  const fails = async (args: string[], status: number, code: string) => {
    const r = await sandpit(args);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^error: .*\\[${status} ${code}\\]\\n$`));
  };
  const exec = async (id: string, command: string) => {
    const res = await api.post(`/sandboxes/${id}/exec`, { command });
    assert.equal(res.body.exit_code, 0, `${command}: ${JSON.stringify(res.body)}`);
    return res.body.stdout as string;
  };

  before(async () => {
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
    api = new Api(server.url, server.key);
    a = (await json(['sandbox', 'create'])).id;
    b = (await json(['sandbox', 'create'])).id;
  });
  after(async () => {
    try {
      if (api) for (const sb of (await api.get('/sandboxes?limit=1000')).body.sandboxes ?? []) await api.del(`/sandboxes/${sb.id}`);
    } finally {
      await server?.stop();
    }
  });

  it('changes: a table, --json, every page, --limit, --path and --diff', async () => {
    assert.match((await ok(['sandbox', 'changes', a])).stdout, /^no changes against template \S+\n$/);
    await exec(a, `printf 'hi\\n' > /home/user/note.txt && mkdir /home/user/many && cd /home/user/many && touch $(seq 1 1100) && sudo sh -c 'echo hello > /etc/motd'`);

    const table = (await ok(['sandbox', 'changes', a, '--path', '/home/user/note.txt'])).stdout;
    assert.match(table, /^PATH +KIND +TYPE +SIZE\n\/home\/user\/note\.txt +added +file +3 B\n$/);
    const motd = await json(['sandbox', 'changes', a, '--path', '/etc/motd']);
    assert.equal(motd.base.kind, 'template');
    assert.deepEqual(motd.changes, [{ path: '/etc/motd', kind: 'modified', type: 'file', size: 6 }]);

    // Over 1000 changes: the CLI follows next_cursor through every page unless --limit says otherwise.
    const all = await json(['sandbox', 'changes', a]);
    assert.equal(all.next_cursor, undefined);
    assert.equal(all.changes.filter((c: { path: string }) => c.path.startsWith('/home/user/many/')).length, 1100);
    const paths = all.changes.map((c: { path: string }) => c.path);
    assert.deepEqual(paths, [...new Set(paths)].sort(), 'each path once, sorted');
    const first = await json(['sandbox', 'changes', a, '--limit', '1001']);
    assert.deepEqual(
      first.changes.map((c: { path: string }) => c.path),
      paths.slice(0, 1001),
    );
    assert.ok(first.next_cursor, 'a cut list says where it stopped');
    assert.equal((await ok(['sandbox', 'changes', a, '--limit', '2'])).stdout.split('\n').length, 4, 'a header, two rows and the final newline');

    const diff = (await ok(['sandbox', 'changes', a, '--diff', '/etc/motd'])).stdout;
    assert.match(diff, /^--- a\/etc\/motd$/m);
    assert.match(diff, /^\+hello$/m);
    await fails(['sandbox', 'changes', a, '--diff', '/etc/passwd'], 404, 'not_found');
    await fails(['sandbox', 'changes', a, '--path', 'relative'], 400, 'bad_request');
  });

  it('apply-changes: copies the chosen paths, a second time nothing; bad input fails with one line', async () => {
    await exec(a, "printf 'carried\\n' > /home/user/carried.txt");
    const applied = await ok(['sandbox', 'apply-changes', b, '--from', a, '--path', '/home/user/carried.txt', '--path', '/etc/motd']);
    assert.equal(applied.stdout, `modified /etc/motd\nadded    /home/user/carried.txt\napplied 2 changes to ${b}\n`);
    assert.equal(await exec(b, 'cat /home/user/carried.txt /etc/motd'), 'carried\nhello\n');
    assert.deepEqual(await json(['sandbox', 'apply-changes', b, '--from', a, '--path', '/home/user/carried.txt']), { applied: [], conflicts: [], skipped: [] });

    await exec(b, 'echo mine > /home/user/note.txt');
    const clash = await ok(['sandbox', 'apply-changes', b, '--from', a, '--path', '/home/user/note.txt']);
    assert.equal(clash.stdout, `conflict /home/user/note.txt (added there; added /home/user/note.txt here): not applied\napplied 0 changes to ${b}, 1 not applied\n`);

    await fails(['sandbox', 'apply-changes', b, '--from', 'sb-local-00000000-0000-4000-8000-000000000000'], 404, 'not_found');
    const noFrom = await sandpit(['sandbox', 'apply-changes', b]);
    assert.equal(noFrom.code, 1);
    assert.match(noFrom.stderr, /^error: required option '--from <sandbox>' not specified\n$/);
  });
});
