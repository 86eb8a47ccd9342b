/**
 * Issue 3 benchmarks: gVisor pause/resume (checkpoint/restore), snapshot and fork through a real
 * server, next to raw `runsc checkpoint` / `runsc restore` / `runsc run` of the same template root.
 * Prints medians and ratios; asserts nothing. Run: node bench/gvisor.bench.ts (BENCH_RUNS, default 10).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureBaseTemplate } from '../packages/server/src/templates/base-template.ts';
import { Api, IMAGE_DIR, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, ratio, report, sample, timeIt } from './stats.ts';

const run = promisify(execFile);
const N = Number(process.env.BENCH_RUNS ?? 10);
const DIRTY = 'python3 -c \'import time; b = bytearray(256 << 20); b[::4096] = b"x" * len(b[::4096]); time.sleep(1e9)\' >/dev/null 2>&1 &';
const FLAGS = ['--platform=ptrace', '--network=none'];

/** A raw runsc bundle on the template root (read-only), running `args`. */
async function bundle(dir: string, rootfs: string, args: string[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  await run('runsc', ['spec', '--bundle', dir]);
  const spec = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  spec.process.terminal = false;
  spec.process.args = args;
  spec.root = { path: rootfs, readonly: true };
  await writeFile(join(dir, 'config.json'), JSON.stringify(spec));
}

/** runsc run --detach with output to a file (a pipe would be held open by the sandbox). */
function detached(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn('runsc', args, { stdio: 'ignore', detached: true });
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`runsc ${args.join(' ')} exited ${code}`))));
  });
}

async function rawCheckpointRestore(root: string, rootfs: string, dirty: boolean): Promise<{ ckpt: number[]; restore: number[] }> {
  const b = join(root, dirty ? 'dirty' : 'idle');
  await bundle(b, rootfs, dirty ? ['/bin/sh', '-c', DIRTY.replace(/ >\/dev\/null 2>&1 &$/, '')] : ['/bin/sleep', 'infinity']);
  const state = ['--root', join(root, 'state'), ...FLAGS];
  const ckpt: number[] = [];
  const restore: number[] = [];
  for (let i = 0; i < N; i++) {
    const id = `bench-${process.pid}-${dirty ? 'd' : 'i'}-${i}`;
    const image = join(root, `img-${id}`);
    await detached([...state, 'run', '--detach', '--bundle', b, id]);
    if (dirty) await new Promise((r) => setTimeout(r, 2000));
    ckpt.push(await timeIt(() => run('runsc', [...state, 'checkpoint', '--image-path', image, id])));
    await run('runsc', [...state, 'delete', '--force', id]).catch(() => undefined);
    const rid = `${id}-r`;
    restore.push(await timeIt(() => detached([...state, 'restore', '--detach', '--image-path', image, '--bundle', b, rid])));
    await run('runsc', [...state, 'delete', '--force', rid]).catch(() => undefined);
    await rm(image, { recursive: true, force: true });
  }
  return { ckpt, restore };
}

async function rawRun(root: string, rootfs: string): Promise<number[]> {
  const b = join(root, 'true');
  await bundle(b, rootfs, ['/bin/true']);
  let i = 0;
  return sample(N, () => run('runsc', ['--root', join(root, 'state'), ...FLAGS, 'run', '--bundle', b, `bench-${process.pid}-t${i++}`]));
}

/**
 * `runsc run --detach` of a Sandpit sandbox's own config (network namespace provisioned as the
 * driver does, cgroups, mounts), with `sleep` as init: the engine's share of a create.
 */
async function rawRunSandpitConfig(root: string, srv: ServerProcess, api: Api, post: (path: string, body?: unknown) => Promise<any>): Promise<number[]> {
  const sb = await post('/sandboxes', {});
  const id = sb.id.replace(/^sb-[a-z0-9]+-/, '');
  const dir = join(srv.dataDir, 'gvisor', 'sandboxes', id);
  const cfg = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  const net = JSON.parse(await readFile(join(dir, 'sandbox.json'), 'utf8')).net as { addrs: { cidr: string; dev: string }[]; routes: { dst: string; gateway?: string; dev?: string }[] };
  await post(`/sandboxes/${sb.id}/pause`);
  const netns = cfg.linux.namespaces.find((n: { type: string }) => n.type === 'network').path as string;
  const b = join(root, 'sandpit-config');
  await mkdir(b, { recursive: true });
  cfg.process.args = ['/bin/sleep', 'infinity'];
  await writeFile(join(b, 'config.json'), JSON.stringify(cfg));
  // gVisor's netstack takes the namespace's address and routes: put them back before every start, as the driver does.
  const batch = [
    ...net.addrs.map((a) => `addr replace ${a.cidr} dev ${a.dev}`),
    ...net.routes.map((r) => `route replace ${r.dst}${r.gateway ? ` via ${r.gateway}` : ''}${r.dev ? ` dev ${r.dev}` : ''}`),
  ].join('\n');
  const state = join(root, 'state');
  const out: number[] = [];
  try {
    for (let i = 0; i < N; i++) {
      const c = spawn('nsenter', [`--net=${netns}`, 'ip', '-batch', '-'], { stdio: ['pipe', 'ignore', 'ignore'] });
      c.stdin.end(`${batch}\n`);
      await new Promise((r) => c.on('close', r));
      const rid = `bench-${process.pid}-cfg${i}`;
      out.push(
        await timeIt(() =>
          detachedIn([
            '--mount',
            '--propagation',
            'private',
            '--',
            'sh',
            '-c',
            'mount -t tmpfs -o ro tmpfs /proc/sys/net && exec "$@"',
            'sh',
            'runsc',
            '--root',
            state,
            '--platform=ptrace',
            '--host-uds=open',
            '--network=sandbox',
            'run',
            '--detach',
            '--bundle',
            b,
            rid,
          ]),
        ),
      );
      await run('runsc', ['--root', state, 'delete', '--force', rid]).catch(() => undefined);
    }
  } finally {
    await api.del(`/sandboxes/${sb.id}`);
  }
  return out;
}

/** `unshare <args>` as the driver runs runsc with a network namespace. */
function detachedIn(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn('unshare', args, { stdio: 'ignore', detached: true });
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`unshare ${args.join(' ')} exited ${code}`))));
  });
}

async function main(): Promise<void> {
  const rootfs = await ensureBaseTemplate(IMAGE_DIR);
  const root = await mkdtemp(join(tmpdir(), 'sandpit-bench-runsc-'));
  const srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_RATE_LIMIT: '0' });
  const api = new Api(srv.url, srv.key);
  const post = async (path: string, body?: unknown) => {
    const r = await api.post(path, body);
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  try {
    const rawIdle = await rawCheckpointRestore(root, rootfs, false);
    const rawDirty = await rawCheckpointRestore(root, rootfs, true);
    const rawStart = await rawRun(root, rootfs);
    const rawConfig = await rawRunSandpitConfig(root, srv, api, post);

    const create: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      create.push(
        await timeIt(async () => {
          const sb = await post('/sandboxes', {});
          ids.push(sb.id);
          await post(`/sandboxes/${sb.id}/exec`, { command: 'true' });
        }),
      );
    }
    const idle = ids[0]!;
    const pause: number[] = [];
    const resume: number[] = [];
    for (let i = 0; i < N; i++) {
      pause.push(await timeIt(() => post(`/sandboxes/${idle}/pause`)));
      resume.push(await timeIt(() => post(`/sandboxes/${idle}/resume`)));
    }
    const dirty = ids[1]!;
    await post(`/sandboxes/${dirty}/exec`, { command: DIRTY });
    await new Promise((r) => setTimeout(r, 2000));
    const pauseDirty: number[] = [];
    const resumeDirty: number[] = [];
    for (let i = 0; i < N; i++) {
      pauseDirty.push(await timeIt(() => post(`/sandboxes/${dirty}/pause`)));
      resumeDirty.push(await timeIt(() => post(`/sandboxes/${dirty}/resume`)));
    }
    const snaps: string[] = [];
    const snapshot: number[] = [];
    const snapshotThenExec: number[] = [];
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      snaps.push((await post(`/sandboxes/${idle}/snapshot`, {})).id);
      snapshot.push(performance.now() - t0);
      // The answer comes once the image is on disk; the source's restore ends before it runs a command.
      await post(`/sandboxes/${idle}/exec`, { command: 'true' });
      snapshotThenExec.push(performance.now() - t0);
    }
    const fork = await sample(N, async () => {
      const sb = await post('/sandboxes', { from_snapshot: snaps[0] });
      await post(`/sandboxes/${sb.id}/exec`, { command: 'true' });
      ids.push(sb.id);
    });

    report('raw runsc checkpoint (idle)', rawIdle.ckpt);
    report('raw runsc restore (idle)', rawIdle.restore);
    report('pause (idle)', pause, '150 ms');
    ratio('pause vs raw checkpoint (idle)', pause, rawIdle.ckpt);
    report('resume (idle)', resume, '250 ms');
    ratio('resume vs raw restore (idle)', resume, rawIdle.restore);
    report('raw runsc checkpoint (256 MiB dirty)', rawDirty.ckpt);
    report('raw runsc restore (256 MiB dirty)', rawDirty.restore);
    report('pause (256 MiB dirty)', pauseDirty, '800 ms');
    ratio('pause vs raw checkpoint (dirty)', pauseDirty, rawDirty.ckpt);
    report('resume (256 MiB dirty)', resumeDirty, '500 ms');
    ratio('resume vs raw restore (dirty)', resumeDirty, rawDirty.restore);
    report('snapshot of a running idle sandbox (201)', snapshot, '200 ms');
    report('snapshot, then the source runs a command', snapshotThenExec);
    report('fork from snapshot -> first exec', fork, '300 ms');
    report('raw runsc run /bin/true', rawStart);
    report("raw runsc run --detach, a sandbox's own config", rawConfig);
    ratio('  ...vs raw runsc run /bin/true', rawConfig, rawStart);
    report('create -> first exec', create);
    ratio('create -> first exec vs raw runsc run', create, rawStart);
    ratio('create -> first exec vs raw run of the same config', create, rawConfig);
    console.log(`(medians of ${N}; create target: at most 1.3x raw; ${median(create).toFixed(0)} ms vs ${median(rawStart).toFixed(0)} ms)`);
    for (const id of snaps) await api.del(`/snapshots/${id}`);
  } finally {
    await srv.stop();
    const state = join(root, 'state');
    const left = (await run('runsc', ['--root', state, 'list', '--quiet']).catch(() => ({ stdout: '' }))).stdout.split('\n').filter(Boolean);
    for (const id of left) await run('runsc', ['--root', state, 'delete', '--force', id]).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
}

await main();
