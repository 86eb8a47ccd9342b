import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { underReaper } from '../src/runtime/host/reaper.ts';

/** A node process that calls dieWithReaper, says so, and stays. */
const SCRIPT = `import { dieWithReaper } from ${JSON.stringify(new URL('../src/runtime/host/reaper.ts', import.meta.url).pathname)}; dieWithReaper(); console.log('ready ' + process.pid); setInterval(() => {}, 1000);`;

function start(file: string, args: string[]) {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /ready (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before it was ready`)));
  });
  return { child, pid };
}

const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
};

async function gone(pid: number, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) if (!alive(pid)) return true;
  return false;
}

test('a server under the reaper dies with it, even when the reaper is killed outright; signals it can pass on reach the server', async () => {
  const { file, args } = underReaper(process.execPath, ['--input-type=module', '-e', SCRIPT]);
  const a = start(file, args);
  const server = await a.pid;
  assert.notEqual(server, a.child.pid, 'the server is the reaper child');
  const exited = new Promise((r) => a.child.once('exit', r));
  a.child.kill('SIGKILL');
  await exited;
  const died = await gone(server, 5_000);
  // A server that outlived its reaper is this test's to end.
  if (!died) process.kill(server, 'SIGKILL');
  assert.ok(died, `server ${server} outlived its reaper`);

  const b = start(file, args);
  const second = await b.pid;
  const code = new Promise<number | null>((r) => b.child.once('exit', (c) => r(c)));
  b.child.kill('SIGTERM');
  assert.equal(await code, 128 + 15, 'the reaper passed SIGTERM on and exits as the server did');
  assert.ok(!alive(second));
});

test('a process not under the reaper is left alone', async () => {
  const c = start(process.execPath, ['--input-type=module', '-e', SCRIPT]);
  const pid = await c.pid;
  assert.equal(pid, c.child.pid);
  assert.ok(alive(pid));
  const exited = new Promise((r) => c.child.once('exit', r));
  c.child.kill('SIGTERM');
  await exited;
});
