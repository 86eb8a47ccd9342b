import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Runsc } from '../src/runtime/gvisor/runsc.ts';

/**
 * `Runsc.state` answers "no such container" from runsc's state root when it can, without starting
 * runsc: a restart asks it of every sandbox, most of them paused with their run deleted. A script
 * stands in for runsc here and records each call.
 */
let dir: string;
let root: string;
let calls: string;
let runsc: Runsc;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-runsc-state-'));
  root = join(dir, 'root');
  calls = join(dir, 'calls');
  const fake = join(dir, 'runsc');
  await writeFile(fake, `#!/bin/sh\necho "$@" >> ${calls}\necho '{"id":"'"$4"'","status":"running","pid":1}'\n`);
  await chmod(fake, 0o755);
  runsc = new Runsc(root, fake, 'systrap');
});
after(() => rm(dir, { recursive: true, force: true }));

const called = async () => (await readFile(calls, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);

test('a container with no state file in a root of the known layout is answered without runsc', async () => {
  await rm(calls, { force: true });
  await mkdir(root, { recursive: true });
  await writeFile(join(root, 'a_sandbox:a.state'), '{}');
  await writeFile(join(root, 'runsc-a.sock'), '');
  assert.equal(await runsc.state('b'), undefined);
  assert.deepEqual(await called(), [], 'runsc was not started');
  assert.equal((await runsc.state('a'))?.status, 'running', 'a container it has is asked of runsc');
  assert.deepEqual(await called(), [`--root ${root} state a`]);
});

test('a state root runsc may lay out otherwise, or none at all, leaves the answer to runsc', async () => {
  await rm(calls, { force: true });
  await writeFile(join(root, 'c.state'), '{}');
  assert.equal((await runsc.state('b'))?.status, 'running');
  await rm(root, { recursive: true, force: true });
  assert.equal((await runsc.state('b'))?.status, 'running');
  assert.deepEqual(await called(), [`--root ${root} state b`, `--root ${root} state b`]);
});
