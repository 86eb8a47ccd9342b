import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { teardownEngine } from '../../server/src/teardown.ts';
import { loadConfig } from '../../server/src/config.ts';
import { CLI, freePort, IMAGE_DIR } from '../../server/test/helpers/server-process.ts';

/** Runs `sandpit serve` until it exits (a failed start exits by itself); answers its exit code and stderr. */
async function serve(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', SANDPIT_IMAGE_DIR: IMAGE_DIR, SANDPIT_LOG_LEVEL: 'warn', SANDPIT_NET_WARM: '1', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  clearTimeout(timer);
  return { code, stderr };
}

async function withDataDir(use: (dir: string) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  const parent = await mkdtemp(join(tmpdir(), 'sandpit-start-'));
  const dir = join(parent, 'data');
  // mkdtemp makes it 0700: the container engine's sandboxes must pass through it.
  await chmod(parent, 0o755);
  try {
    await use(dir);
  } finally {
    await chmod(parent, 0o755);
    await teardownEngine(loadConfig({ SANDPIT_DATA_DIR: dir, SANDPIT_IMAGE_DIR: IMAGE_DIR, ...env }));
    await rm(parent, { recursive: true, force: true });
  }
}

function assertOneLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line, not:\n${stderr}`);
  assert.match(lines[0]!, /^sandpit: cannot start: /);
  assert.match(lines[0]!, pattern);
}

for (const setting of ['PORT', 'SANDPIT_E2B_PORT'] as const) {
  test(`a ${setting} in use: one line naming it, exit code 1`, async () => {
    const taken = createServer();
    const busy = await freePort();
    await new Promise<void>((r) => taken.listen(busy, '127.0.0.1', r));
    try {
      await withDataDir(async (dir) => {
        const ports = { PORT: String(await freePort()), SANDPIT_E2B_PORT: String(await freePort()) };
        ports[setting] = String(busy);
        const { code, stderr } = await serve({ SANDPIT_DATA_DIR: dir, SANDPIT_DRIVER: 'container', ...ports });
        assert.equal(code, 1);
        assertOneLine(stderr, new RegExp(`port ${busy} \\(${setting}\\) is already in use`));
      });
    } finally {
      taken.close();
    }
  });
}

test('the container engine on a data directory its sandboxes cannot reach: one line, exit code 1', async () => {
  await withDataDir(async (dir) => {
    await mkdir(dir, { recursive: true });
    await chmod(join(dir, '..'), 0o700);
    const { code, stderr } = await serve({ SANDPIT_DATA_DIR: dir, SANDPIT_DRIVER: 'container', PORT: String(await freePort()), SANDPIT_E2B_PORT: '0' });
    assert.equal(code, 1);
    assertOneLine(stderr, /without o\+x/);
  });
});
