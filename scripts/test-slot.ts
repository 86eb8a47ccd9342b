/**
 * Preloaded into every test file's process (`node --test --import`): test files run two at a time, and
 * the files listed here run alone. Those put clusters on node deadlines, measure behaviour under load, or
 * keep both cores busy (desktops, the code interpreter, the PostgreSQL pass), or tidy the shared cgroup
 * parent (the container driver test); beside another heavy
 * file a cluster node once missed its deadline mid-storm. Every other file takes a shared lock, these an
 * exclusive one, held by a `flock` child until this process exits, however it ends (the pipe closes).
 */
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';

const ALONE = [
  'cli/test/cluster.test.ts',
  'server/test/cluster.test.ts',
  'server/test/cluster-move.test.ts',
  'server/test/cluster-volumes.test.ts',
  'server/test/code-interpreter.test.ts',
  'server/test/container-driver.test.ts',
  'server/test/desktop.test.ts',
  'server/test/e2b-desktop.test.ts',
  'server/test/engine-pressure.test.ts',
  'server/test/faults.test.ts',
  'server/test/postgres-store.test.ts',
  'server/test/regions.test.ts',
  'server/test/replicas.test.ts',
  'server/test/restart.test.ts',
];
const LOCK = '/tmp/sandpit-test-files.lock';
// Set once held, so test runners a file starts (the PostgreSQL pass) do not wait on their parent's lock.
const HELD = 'SANDPIT_TEST_SLOT_HELD';

const file = process.argv[1] ?? '';
if (file.endsWith('.test.ts') && !process.env[HELD]) {
  const alone = ALONE.some((f) => file.endsWith(`/packages/${f}`));
  const holder = spawn('flock', [alone ? '-x' : '-s', LOCK, 'sh', '-c', 'echo held; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    holder.once('error', reject);
    holder.once('exit', (code) => reject(new Error(`flock ${LOCK} exited with ${code}`)));
    (holder.stdout as Socket).once('data', () => resolve());
  });
  holder.removeAllListeners('exit');
  // The lock lives as long as this process; it must not keep it alive.
  holder.unref();
  (holder.stdin as Socket).unref();
  (holder.stdout as Socket).unref();
  process.env[HELD] = '1';
}
