/**
 * Issue 11 item 8: Debian 12's runsc (the one on PATH) against a candidate build, raw, on the base
 * template's root, in the same run: start, exec, a process start inside, `node -v`, syscall-heavy work,
 * checkpoint and restore (idle and with 256 MiB in memory: pause/resume; a snapshot is the two back to
 * back), whether the statx shim is still needed and whether a sandbox holding TCP endpoints (open, or
 * just closed) can be checkpointed. Prints medians; asserts nothing.
 *
 *   RUNSC_CANDIDATE=/path/to/runsc node bench/runsc-versions.bench.ts      (BENCH_RUNS, default 10)
 *
 * Debian 13's build, without installing it: `scripts/fetch-trixie-runsc.sh DIR` (apt-get download against a
 * private trixie source list) puts it at DIR/usr/bin/runsc.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureBaseTemplate } from '../packages/server/src/templates/base-template.ts';
import { IMAGE_DIR } from '../packages/server/test/helpers/server-process.ts';
import { median, report, sample, timeIt } from './stats.ts';

const run = promisify(execFile);
const N = Number(process.env.BENCH_RUNS ?? 10);
const CANDIDATE = process.env.RUNSC_CANDIDATE;
const STATS = 'python3 -c "import os\nfor _ in range(100000): os.stat(\'/\')"';
const FORKS = 'i=0; while [ $i -lt 100 ]; do /bin/true; i=$((i+1)); done';
const HOLD_256 = 'python3 -c "import time\nb = bytearray(256 << 20)\nb[::4096] = b\'x\' * (len(b) // 4096)\ntime.sleep(1e9)"';
/** A connection to itself over loopback, held open (or closed, leaving TIME_WAIT), then sleep. */
const tcp = (close: boolean) =>
  `python3 -c "import socket, time\nl = socket.socket(); l.bind(('127.0.0.1', 8080)); l.listen()\nc = socket.create_connection(('127.0.0.1', 8080)); s, _ = l.accept()\n${close ? 'c.close(); s.close()\n' : ''}time.sleep(1e9)"`;

interface Engine {
  label: string;
  bin: string;
  platform: string;
}

async function bundle(dir: string, rootfs: string, args: string[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  await run('runsc', ['spec', '--bundle', dir]);
  const spec = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  spec.process.terminal = false;
  spec.process.args = args;
  spec.root = { path: rootfs, readonly: true };
  await writeFile(join(dir, 'config.json'), JSON.stringify(spec));
}

function detached(bin: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(bin, args, { stdio: 'ignore', detached: true });
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${bin} ${args.join(' ')} exited ${code}`))));
  });
}

async function measure(e: Engine, root: string, rootfs: string): Promise<void> {
  const state = ['--root', join(root, `state-${e.label}`), `--platform=${e.platform}`, '--network=none'];
  const once = join(root, e.label, 'true');
  const idle = join(root, e.label, 'idle');
  await bundle(once, rootfs, ['/bin/true']);
  await bundle(idle, rootfs, ['/bin/sleep', 'infinity']);
  console.log(`\n== ${e.label}: ${(await run(e.bin, ['--version'])).stdout.split('\n')[0]}, platform ${e.platform}`);
  let i = 0;
  report('start: runsc run /bin/true', await sample(N, () => run(e.bin, [...state, 'run', '--bundle', once, `b${process.pid}-${i++}`])));

  const id = `b${process.pid}-idle`;
  await detached(e.bin, [...state, 'run', '--detach', '--bundle', idle, id]);
  try {
    const exec = await sample(N, () => run(e.bin, [...state, 'exec', id, '/bin/true']));
    report('exec: runsc exec /bin/true', exec);
    const forks = await sample(Math.max(3, N / 2), () => run(e.bin, [...state, 'exec', id, '/bin/sh', '-c', FORKS]));
    console.log(`${'process start inside (100 /bin/true, per process)'.padEnd(44)} median ${((median(forks) - median(exec)) / 100).toFixed(2).padStart(8)} ms`);
    report('node -v (runsc exec)', await sample(N, () => run(e.bin, [...state, 'exec', id, 'node', '-v'])));
    report('syscalls: 100,000 stat() in python3', await sample(3, () => run(e.bin, [...state, 'exec', id, '/bin/sh', '-c', STATS])));
    const statx = await run(e.bin, [...state, 'exec', id, 'stat', '/']).then(
      () => 'works',
      (err: Error) => `fails (${err.message.split('\n').at(-2)?.trim()})`,
    );
    console.log(`${'coreutils stat without the statx shim'.padEnd(44)} ${statx}`);
  } finally {
    await run(e.bin, [...state, 'delete', '--force', id]).catch(() => undefined);
  }

  const ckpt: number[] = [];
  const restore: number[] = [];
  for (let k = 0; k < N; k++) {
    const cid = `b${process.pid}-c${k}`;
    const image = join(root, `img-${e.label}-${k}`);
    await detached(e.bin, [...state, 'run', '--detach', '--bundle', idle, cid]);
    ckpt.push(await timeIt(() => run(e.bin, [...state, 'checkpoint', '--image-path', image, cid])));
    await run(e.bin, [...state, 'delete', '--force', cid]).catch(() => undefined);
    restore.push(await timeIt(() => detached(e.bin, [...state, 'restore', '--detach', '--image-path', image, '--bundle', idle, `${cid}-r`])));
    await run(e.bin, [...state, 'delete', '--force', `${cid}-r`]).catch(() => undefined);
    await rm(image, { recursive: true, force: true });
  }
  report('pause: runsc checkpoint (idle)', ckpt);
  report('resume: runsc restore (idle)', restore);
  report(
    'snapshot (checkpoint + restore, idle)',
    ckpt.map((c, k) => c + restore[k]!),
  );

  const dirty = await cycle(e, state, rootfs, root, 'd', Math.max(3, N / 3), HOLD_256);
  report('pause: checkpoint, 256 MiB in memory', dirty.ckpt);
  report('resume: restore, 256 MiB in memory', dirty.restore);
  for (const close of [false, true]) {
    const r = await cycle(e, state, rootfs, root, close ? 'tw' : 'to', 1, tcp(close)).then(
      () => 'works',
      (err: Error) => `fails (${err.message.split('\n').filter(Boolean).at(-1)?.trim().slice(0, 120)})`,
    );
    console.log(`${`checkpoint with a loopback TCP connection ${close ? 'just closed' : 'open'}`.padEnd(44)} ${r}`);
  }
}

/** Runs `sh -c init` as a sandbox, checkpoints and restores it `n` times; the timings. */
async function cycle(e: Engine, state: string[], rootfs: string, root: string, tag: string, n: number, init: string): Promise<{ ckpt: number[]; restore: number[] }> {
  const ckpt: number[] = [];
  const restore: number[] = [];
  const dir = join(root, e.label, tag);
  await bundle(dir, rootfs, ['/bin/sh', '-c', init]);
  for (let k = 0; k < n; k++) {
    const cid = `b${process.pid}-${tag}${k}`;
    const image = join(root, `img-${e.label}-${tag}${k}`);
    await detached(e.bin, [...state, 'run', '--detach', '--bundle', dir, cid]);
    try {
      await new Promise((r) => setTimeout(r, 1500));
      ckpt.push(await timeIt(() => run(e.bin, [...state, 'checkpoint', '--image-path', image, cid])));
      await run(e.bin, [...state, 'delete', '--force', cid]).catch(() => undefined);
      restore.push(await timeIt(() => detached(e.bin, [...state, 'restore', '--detach', '--image-path', image, '--bundle', dir, `${cid}-r`])));
    } finally {
      await run(e.bin, [...state, 'delete', '--force', cid]).catch(() => undefined);
      await run(e.bin, [...state, 'delete', '--force', `${cid}-r`]).catch(() => undefined);
      await rm(image, { recursive: true, force: true });
    }
  }
  return { ckpt, restore };
}

const rootfs = await ensureBaseTemplate(IMAGE_DIR);
const root = await mkdtemp(join(tmpdir(), 'sandpit-runsc-bench-'));
try {
  const engines: Engine[] = [{ label: 'current', bin: 'runsc', platform: 'ptrace' }];
  if (CANDIDATE) engines.push({ label: 'candidate', bin: CANDIDATE, platform: 'ptrace' }, { label: 'candidate-systrap', bin: CANDIDATE, platform: 'systrap' });
  else console.log('RUNSC_CANDIDATE not set: measuring the current runsc only');
  for (const e of engines) await measure(e, root, rootfs);
} finally {
  await rm(root, { recursive: true, force: true });
}
