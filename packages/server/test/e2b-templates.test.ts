import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { BuildError, type LogEntry, Sandbox, Template, waitForTimeout } from 'e2b';
import { Api, freePort, ServerProcess } from './helpers/server-process.ts';
import { TestRegistry } from './helpers/registry.ts';
import { makeDebianImage, pushImage } from './helpers/test-images.ts';

/**
 * E2B's template builder (`Template()...`, `Template.build`), from the unmodified `e2b` package,
 * against Sandpit's E2B port on the crun engine; Docker Hub's names come from a local registry
 * (SANDPIT_DOCKER_HUB_MIRROR), as this host reaches no Docker Hub.
 */
let server: ServerProcess;
let api: Api;
let e2bUrl: string;
let registry: TestRegistry;
let context: string;
const work = mkdtempSync(join(tmpdir(), 'e2b-templates-'));

before(async () => {
  registry = await TestRegistry.start();
  await makeDebianImage(join(work, 'layout'));
  await pushImage(join(work, 'layout'), 'debian', `${registry.host}/library/tinydeb:1`);
  const port = await freePort();
  server = await ServerProcess.start({
    SANDPIT_DRIVER: 'container',
    SANDPIT_E2B_PORT: String(port),
    SANDPIT_DOCKER_HUB_MIRROR: registry.host,
    SANDPIT_INSECURE_REGISTRIES: registry.host,
  });
  api = new Api(server.url, server.key);
  e2bUrl = `http://127.0.0.1:${port}`;
  process.env.E2B_API_URL = e2bUrl;
  process.env.E2B_SANDBOX_URL = e2bUrl;
  process.env.E2B_API_KEY = server.key;

  context = join(work, 'context');
  mkdirSync(join(context, 'folder/sub'), { recursive: true });
  writeFileSync(join(context, 'folder/test.txt'), 'This is a test file.');
  writeFileSync(join(context, 'folder/sub/deep.txt'), 'deep');
  writeFileSync(join(context, 'run.sh'), '#!/bin/sh\necho ran\n');
  symlinkSync('test.txt', join(context, 'folder/link.txt'));
});

after(async () => {
  for (const sb of (await api?.get('/sandboxes?limit=1000'))?.body.sandboxes ?? []) await api.del(`/sandboxes/${sb.id}`);
  await server?.stop();
  await registry?.stop();
  rmSync(work, { recursive: true, force: true });
});

const e2b = (path: string, init: RequestInit = {}) =>
  fetch(e2bUrl + path, { ...init, headers: { 'x-api-key': server.key, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...(init.headers ?? {}) } });

test('Template.build: copy (globs, directories, symlinks, owner, mode), run, workdir, env and a start command; sandboxes start from it by name', async () => {
  const logs: LogEntry[] = [];
  const template = Template({ fileContextPath: context })
    .fromBaseImage()
    .copy('folder/*', 'folder')
    .copy('run.sh', '/opt/tools/run.sh', { mode: 0o755, user: 'root' })
    .setEnvs({ GREETING: 'hello' })
    .runCmd('cat folder/test.txt > copied.txt && echo "$GREETING" > env.txt')
    .setWorkdir('/app')
    .runCmd('whoami > who.txt; pwd > where.txt', { user: 'root' })
    .setStartCmd('echo started > /tmp/started', waitForTimeout(1000));
  const info = await Template.build(template, 'e2b-copy', { onBuildLogs: (l) => logs.push(l) });
  assert.match(info.templateId, /^[0-9a-f-]{36}$/);
  assert.ok(
    logs.some((l) => l.message.includes('step 1/')),
    'build logs reach onBuildLogs',
  );
  assert.deepEqual((await api.get(`/templates/${info.templateId}`)).body.name, 'e2b-copy');

  const sb = await Sandbox.create('e2b-copy');
  const run = (cmd: string) => sb.commands.run(cmd).then((r) => r.stdout.trim());
  assert.equal(await run('cat /home/user/folder/test.txt /home/user/folder/sub/deep.txt'), 'This is a test file.deep');
  assert.equal(await run('readlink /home/user/folder/link.txt'), 'test.txt', 'symlinks stay symlinks');
  assert.equal(await run('stat -c %U /home/user/folder /home/user/folder/test.txt | sort -u'), 'user');
  assert.equal(await run('stat -c "%U %a" /opt/tools/run.sh && /opt/tools/run.sh'), 'root 755\nran');
  assert.equal(await run('cat /home/user/copied.txt /home/user/env.txt'), 'This is a test file.hello');
  assert.equal(await run('cat /app/who.txt /app/where.txt'), 'root\n/app');
  assert.equal(await run('pwd'), '/app', "the template's workdir is the sandbox's");
  assert.equal(await run('echo $GREETING'), 'hello');
  assert.equal(await run('cat /tmp/started'), 'started', 'the start command ran (and may exit: the ready command decides)');
  await sb.kill();
});

test("a command as an account the template has not fails with E2B's message and step", async () => {
  const template = Template().fromTemplate('base').runCmd('true').runCmd('whoami', { user: 'root123' });
  await assert.rejects(Template.build(template, 'e2b-nouser'), (err: unknown) => {
    assert.ok(err instanceof BuildError);
    assert.match(err.message, /failed to run command 'whoami': command failed: unauthenticated: invalid username: 'root123'/);
    return true;
  });
  const t = (await api.get('/templates/e2b-nouser')).body;
  assert.equal(t.status, 'failed');
  assert.match(t.error, /^step_failed: /);
});

test('an image of Docker Hub is pulled from the mirror; buildInBackground answers at once and the status follows the build', async () => {
  const template = Template().fromImage('tinydeb:1').runCmd('cat /srv/from-image.txt > /tmp/seen && test "$(whoami)" = user', { user: 'user' });
  const info = await Template.buildInBackground(template, 'e2b-image');
  const first = await Template.getBuildStatus(info);
  assert.ok(['building', 'ready'].includes(first.status), first.status);
  let status = first;
  const lines: string[] = first.logEntries.map((e) => e.message);
  for (let i = 0; i < 600 && status.status === 'building'; i++) {
    await new Promise((r) => setTimeout(r, 200));
    status = await Template.getBuildStatus(info, { logsOffset: lines.length });
    lines.push(...status.logEntries.map((e) => e.message));
  }
  assert.equal(status.status, 'ready', lines.join('\n'));
  assert.ok(
    lines.some((l) => l.includes(`Docker Hub mirror ${registry.host}`)),
    lines.join('\n'),
  );
  const sb = await Sandbox.create('e2b-image');
  assert.equal((await sb.commands.run('cat /tmp/seen')).stdout, 'image file\n');
  await sb.kill();
});

test('tags: a build named name:tag, assigned, listed and removed; name:tag starts sandboxes of that build after newer builds', async () => {
  const first = await Template.build(Template().fromTemplate('base').runCmd('echo one > /home/user/v'), 'e2b-tags:v1');
  assert.deepEqual(first.tags, ['v1']);
  const assigned = await Template.assignTags('e2b-tags:v1', ['production', 'e2b-tags:stable']);
  assert.equal(assigned.buildId, first.buildId);
  assert.deepEqual(assigned.tags, ['production', 'stable']);
  assert.deepEqual((await Template.getTags(first.templateId)).map((t) => [t.tag, t.buildId]).sort(), [
    ['latest', first.buildId],
    ['production', first.buildId],
    ['stable', first.buildId],
    ['v1', first.buildId],
  ]);
  await assert.rejects(Template.assignTags('e2b-tags:v1', ':bad'));
  await assert.rejects(Template.assignTags('e2b-tags:v1', 'e2b-tags:'));
  await assert.rejects(Template.assignTags('e2b-tags:nope', 'x'), /nope/);

  const sb = await Sandbox.create('e2b-tags:production');
  assert.equal((await sb.commands.run('cat /home/user/v')).stdout, 'one\n');
  await sb.kill();

  const second = await Template.build(Template().fromTemplate('base').runCmd('echo two > /home/user/v'), 'e2b-tags', { tags: ['v2'] });
  assert.equal(second.templateId, first.templateId, 'a rebuild by name is the same template');
  const tags = new Map((await Template.getTags(first.templateId)).map((t) => [t.tag, t.buildId]));
  assert.equal(tags.get('latest'), second.buildId);
  assert.equal(tags.get('v1'), first.buildId);
  const older = await Sandbox.create('e2b-tags:v1');
  assert.equal((await older.commands.run('cat /home/user/v')).stdout, 'one\n', 'a tag keeps the version its build made');
  await older.kill();
  await assert.rejects(Sandbox.create('e2b-tags:never'), /no tag 'never'/);
  const latest = await Sandbox.create('e2b-tags:latest');
  assert.equal((await latest.commands.run('cat /home/user/v')).stdout, 'two\n');
  await latest.kill();

  await Template.removeTags('e2b-tags', ['production', 'v1']);
  assert.deepEqual((await Template.getTags('e2b-tags')).map((t) => t.tag).sort(), ['latest', 'stable', 'v2']);
  await assert.rejects(Template.removeTags('e2b-no-such', ['x']));
});

test('Template.exists: E2B public names, a team template, and an unknown name', async () => {
  assert.equal(await Template.exists('base'), true);
  assert.equal(await Template.exists('e2b-copy'), true);
  assert.equal(await Template.exists(`nonexistent-${Date.now()}`), false);
});

test('bad input: names, steps, unknown builds and forged upload links are refused and change nothing', async () => {
  const bad = await e2b('/v3/templates', { method: 'POST', body: JSON.stringify({ name: 'Not Valid' }) });
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { code: number }).code, 400);
  assert.equal((await e2b('/v3/templates', { method: 'POST', body: JSON.stringify({ name: 'base' }) })).status, 403);

  const req = (await (await e2b('/v3/templates', { method: 'POST', body: JSON.stringify({ name: 'e2b-bad' }) })).json()) as { templateID: string; buildID: string };
  const start = (body: unknown) => e2b(`/v2/templates/${req.templateID}/builds/${req.buildID}`, { method: 'POST', body: JSON.stringify(body) });
  assert.equal((await start({ steps: [{ type: 'FROB', args: [] }] })).status, 400);
  assert.equal((await start({ steps: [{ type: 'COPY', args: ['a', 'b'], filesHash: 'f'.repeat(64) }] })).status, 400, 'a COPY of files never uploaded');
  assert.equal((await start({ steps: [{ type: 'RUN', args: ['true', 'Bad User'] }] })).status, 400);
  const waiting = (await (await e2b(`/templates/${req.templateID}/builds/${req.buildID}/status`)).json()) as { status: string };
  assert.equal(waiting.status, 'waiting', 'a refused definition leaves the request waiting');
  assert.equal((await api.get('/templates/e2b-bad')).status, 404, 'and makes no template');
  assert.equal((await e2b(`/v2/templates/${req.templateID}/builds/00000000-0000-4000-8000-000000000000`, { method: 'POST', body: '{}' })).status, 404);

  const link = (await (await e2b(`/templates/${req.templateID}/files/${'a'.repeat(64)}`)).json()) as { present: boolean; url: string };
  assert.equal(link.present, false);
  const forged = new URL(link.url);
  forged.searchParams.set('signature', 'x'.repeat(43));
  assert.equal((await fetch(forged, { method: 'PUT', body: 'tar' })).status, 403);
  assert.equal((await fetch(link.url, { method: 'PUT', body: 'not really a tar' })).status, 200);
  const again = (await (await e2b(`/templates/${req.templateID}/files/${'a'.repeat(64)}`)).json()) as { present: boolean };
  assert.equal(again.present, true);
  assert.equal((await e2b(`/templates/${req.templateID}/files/nothex`)).status, 400);
  const fronted = (await (await e2b(`/templates/${req.templateID}/files/${'b'.repeat(64)}`, { headers: { 'x-forwarded-proto': 'https' } })).json()) as { url: string };
  assert.match(fronted.url, /^https:\/\//, 'behind a TLS front the link is https');
});

test('a build requested before the server restarts starts after it, with its tags: open requests are kept in the store', async () => {
  const req = (await (await e2b('/v3/templates', { method: 'POST', body: JSON.stringify({ name: 'e2b-restart', tags: ['kept'] }) })).json()) as {
    templateID: string;
    buildID: string;
  };
  await server.kill9();
  await server.launch();
  const status = async () => (await (await e2b(`/templates/${req.templateID}/builds/${req.buildID}/status`)).json()) as { status: string; reason?: { message: string } };
  assert.equal((await status()).status, 'waiting');
  const again = (await (await e2b('/v3/templates', { method: 'POST', body: JSON.stringify({ name: 'e2b-restart' }) })).json()) as { templateID: string };
  assert.equal(again.templateID, req.templateID, 'a second request for the same new name shares its template id');
  const started = await e2b(`/v2/templates/${req.templateID}/builds/${req.buildID}`, {
    method: 'POST',
    body: JSON.stringify({ fromTemplate: 'base', steps: [{ type: 'RUN', args: ['echo kept > /home/user/k'] }] }),
  });
  assert.equal(started.status, 202);
  let s = await status();
  for (let i = 0; i < 600 && (s.status === 'waiting' || s.status === 'building'); i++) {
    await new Promise((r) => setTimeout(r, 100));
    s = await status();
  }
  assert.equal(s.status, 'ready', JSON.stringify(s.reason));
  assert.equal((await e2b(`/v2/templates/${req.templateID}/builds/${req.buildID}`, { method: 'POST', body: '{}' })).status, 404, 'a started build is no longer open');
  const sb = await Sandbox.create('e2b-restart:kept');
  assert.equal((await sb.commands.run('cat /home/user/k')).stdout, 'kept\n');
  await sb.kill();
});

test('DELETE /templates/{id} deletes a team template by name or id (a snapshot of that id first)', async () => {
  const info = await Template.build(Template().fromTemplate('base').runCmd('true'), 'e2b-doomed');
  const sb = await Sandbox.create('e2b-doomed');
  assert.equal((await e2b('/templates/e2b-doomed', { method: 'DELETE' })).status, 409, 'a template in use stays');
  await sb.kill();
  assert.equal((await e2b(`/templates/${info.templateId}`, { method: 'DELETE' })).status, 204);
  assert.equal(await Template.exists('e2b-doomed'), false);
  assert.equal((await e2b('/templates/e2b-doomed', { method: 'DELETE' })).status, 404);
  assert.equal((await e2b('/templates/base', { method: 'DELETE' })).status, 404, "E2B's public names are not the team's to delete");
  // The audit log has the build and the deletion as template actions, by the template's id.
  // Entries are written once the answer is sent: read until both are there.
  let mine: unknown[] = [];
  for (let i = 0; i < 50 && mine.length < 2; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 100));
    const entries = (await api.get('/audit-log?resource_type=template&limit=100')).body.entries as { action: string; resource: { id: string }; status: number }[];
    mine = entries.filter((x) => x.resource.id === info.templateId).map((x) => [x.action, x.status]);
  }
  assert.deepEqual(mine, [
    ['template.delete', 204],
    ['template.build', 202],
  ]);
});
