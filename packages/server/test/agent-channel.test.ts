import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AgentChannel } from '../src/runtime/gvisor/agent-channel.ts';

/**
 * Stands in for the sandbox end of the channel as runsc makes it: dialed from a network
 * namespace of its own (the gofer's), where the host's socket listing does not show it.
 * It keeps its end `holdS` seconds after our end closes, as a busy agent does.
 */
async function peer(path: string, holdS: number): Promise<ChildProcess> {
  const py = `
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print('connected', flush=True)
while s.recv(4096): pass
time.sleep(float(sys.argv[2]))
s.close()
time.sleep(60)
`;
  const child = spawn('unshare', ['--net', 'python3', '-c', py, path, String(holdS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`peer exited ${code}`)));
    child.stdout!.once('data', () => resolve());
  });
  return child;
}

async function withChannel(holdS: number, fn: (ch: AgentChannel, pid: number) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-channel-test-'));
  const ch = new AgentChannel(join(dir, 'host.sock'));
  let child: ChildProcess | undefined;
  try {
    await ch.open();
    child = await peer(ch.path, holdS);
    // Accepted on our side before the close.
    await new Promise((r) => setTimeout(r, 100));
    await fn(ch, child.pid!);
  } finally {
    await ch.close(0);
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  }
}

test('close waits until the sandbox has closed its end, even of a connection made in another network namespace', () =>
  withChannel(0.5, async (ch, pid) => {
    const t0 = performance.now();
    assert.equal(await ch.close(5000, pid), true);
    assert.ok(performance.now() - t0 >= 400, `returned after ${(performance.now() - t0).toFixed(0)} ms, before the peer closed its end`);
  }));

test('close answers false while the sandbox keeps its end open', () =>
  withChannel(1000, async (ch, pid) => {
    assert.equal(await ch.close(300, pid), false);
  }));

test('close waits for an end the sentry does not hold yet (a connection the gofer dialed, on its way to the sentry)', () =>
  withChannel(0.5, async (ch) => {
    // The sentry: a process that holds no socket of the channel; the end is held elsewhere, as by the gofer.
    const sentry = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const t0 = performance.now();
      assert.equal(await ch.close(5000, sentry.pid), true);
      assert.ok(performance.now() - t0 >= 400, `returned after ${(performance.now() - t0).toFixed(0)} ms, while the gofer's end was still open`);
    } finally {
      sentry.kill('SIGKILL');
    }
  }));

test("close waits for an end in the gofer's namespace after every connection of the channel has ended", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-channel-test-'));
  const ch = new AgentChannel(join(dir, 'host.sock'));
  // The agent's connection ends (so the channel holds none), while another end in the same namespace
  // has lost its peer: a socketpair stands in for a dial the gofer made and has not handed over yet.
  const py = `
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.close()
a, b = socket.socketpair()
b.close()
print('orphaned', flush=True)
time.sleep(0.5)
a.close()
time.sleep(60)
`;
  const sentry = spawn('sleep', ['30'], { stdio: 'ignore' });
  let child: ChildProcess | undefined;
  try {
    await ch.open();
    child = spawn('unshare', ['--net', 'python3', '-c', py, ch.path], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child!.once('exit', (code) => reject(new Error(`peer exited ${code}`)));
      child!.stdout!.once('data', () => resolve());
    });
    // Our end has seen the connection and its end.
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    assert.equal(await ch.close(5000, sentry.pid), true);
    assert.ok(performance.now() - t0 >= 300, `returned after ${(performance.now() - t0).toFixed(0)} ms, while an end in the gofer's namespace was open`);
  } finally {
    await ch.close(0);
    sentry.kill('SIGKILL');
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  }
});
