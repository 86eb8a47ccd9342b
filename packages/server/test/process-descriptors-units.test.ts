import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { sandboxProcesses } from '../src/runtime/gvisor/process-descriptors.ts';

const run = promisify(execFile);

test('with no agent connected, the descriptors are read through the engine even when find exits 1 part-way', async () => {
  // The engine's exec (`runsc exec`) fails a command that exits non-zero, as execFile does. On this host
  // find exits 1 over /proc (descriptors that go while it walks, others it may not read), as in a sandbox.
  const viaEngine = async (argv: string[]) => (await run(argv[0]!, argv.slice(1), { maxBuffer: 64 * 1024 * 1024 })).stdout;
  const dir = mkdtempSync(join(tmpdir(), 'sandpit-fds-'));
  const path = join(dir, 'held');
  const fd = openSync(path, 'w');
  unlinkSync(path);
  try {
    const descriptors = await sandboxProcesses(undefined, viaEngine).descriptors();
    assert.ok(descriptors.split('\n').includes(`/proc/${process.pid}/fd ${path} (deleted)`), 'a deleted file held open is among them');
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});
