import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkpointFlags, needsStatxShim, platformFor, savesEpollWatchedSockets } from '../src/runtime/gvisor/engines.ts';

// What each gVisor build is known to need or lack (docs/drivers.md, "gVisor builds").
const OLD = { path: '/usr/bin/runsc', version: '0.0~20221219.0', platform: 'ptrace' as const };
const NEW = { path: '/var/lib/sandpit/tools/runsc-20240729/runsc', version: '0.0~20240729.0', platform: 'systrap' as const };

test('Debian 12 build: ptrace even when systrap is asked (it has no systrap), the statx shim, no epoll-watched socket saves', () => {
  assert.equal(platformFor(OLD.version, 'systrap'), 'ptrace');
  assert.equal(platformFor(OLD.version, 'ptrace'), 'ptrace');
  assert.equal(platformFor('', 'systrap'), 'ptrace', 'an unreadable version is treated as old');
  assert.equal(needsStatxShim(OLD), true);
  assert.equal(savesEpollWatchedSockets(OLD), false);
  assert.equal(savesEpollWatchedSockets(undefined), false, 'a meta without an engine is the Debian 12 build');
  assert.deepEqual(checkpointFlags(OLD, 'none'), [], 'it has no --compression');
  assert.deepEqual(checkpointFlags(undefined, 'none'), []);
});

test('Debian 13 build: the platform asked for, no shim, event-loop servers saved', () => {
  assert.equal(platformFor(NEW.version, 'systrap'), 'systrap');
  assert.equal(platformFor(NEW.version, 'ptrace'), 'ptrace');
  assert.equal(needsStatxShim(NEW), false);
  assert.equal(savesEpollWatchedSockets(NEW), true);
  assert.deepEqual(checkpointFlags(NEW, 'none'), ['--compression=none']);
  assert.deepEqual(checkpointFlags(NEW, 'flate-best-speed'), ['--compression=flate-best-speed']);
});
