import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { PostgresCluster, TEST_POSTGRES_ENV } from './helpers/postgres.ts';

/**
 * The store-heavy files run a second time with PostgreSQL as the store (each test server gets its
 * own database on one throwaway cluster); the rest of the suite does not touch the store's
 * dialect-specific parts and runs on SQLite only.
 */
const FILES = ['teams.test.ts', 'billing.test.ts', 'sandboxes.test.ts', 'audit.test.ts', 'webhooks.test.ts', 'e2b-templates.test.ts'];

test('the store-heavy tests pass with PostgreSQL as the store', async (t) => {
  if (process.env[TEST_POSTGRES_ENV]) return t.skip('already the PostgreSQL pass');
  const cluster = await PostgresCluster.start();
  t.after(() => cluster.stop());
  const files = FILES.map((f) => new URL(f, import.meta.url).pathname);
  // Without the runner's own context variable the child runs its files instead of reporting to this run.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const child = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-timeout=600000', '--test-reporter=tap', ...files], {
    env: { ...env, [TEST_POSTGRES_ENV]: cluster.adminUrl, SANDPIT_DRIVER: 'container' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, output);
  assert.match(output, /^# pass [1-9]/m, output);
  assert.match(output, /^# fail 0$/m, output);
});
