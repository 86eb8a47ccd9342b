/**
 * Issue 14 benchmark: a template from a ~200 MB image (platform/base's root filesystem as a
 * one-layer image in a docker-registry on loopback), cold (nothing cached) and cached (the
 * image already unpacked), each to a ready template and to the first command in a sandbox of
 * it, next to `skopeo copy` + `umoci unpack` alone timed in the same run (and + `umoci raw unpack`,
 * which is what the server runs: the root only, without the mtree that hashes every file).
 * Goals: cold within 1.2x of the raw tools, cached under 1 s to a ready template.
 * Run: node bench/image-templates.bench.ts   (BENCH_RUNS, default 3; BENCH_DRIVER, default container).
 * The image is built once into BENCH_CACHE (default /var/lib/sandpit/bench-cache/images) and
 * reused by later runs; it is rebuilt when absent.
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../packages/server/src/runtime/host/run-command.ts';
import { TestRegistry } from '../packages/server/test/helpers/registry.ts';
import { Api, IMAGE_DIR, parseSse, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { makeImage } from '../packages/server/test/helpers/test-images.ts';
import { median, ratio, report, timeIt } from './stats.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CACHE = process.env.BENCH_CACHE ?? '/var/lib/sandpit/bench-cache/images';

async function baseRootfs(): Promise<string> {
  const dir = join(IMAGE_DIR, 'templates/platform-base');
  for (const d of await readdir(dir)) {
    const root = join(dir, d, 'rootfs');
    if (
      await stat(root).then(
        () => true,
        () => false,
      )
    )
      return root;
  }
  throw new Error(`no platform/base root under ${dir}: start a server once to build it`);
}

async function ensureImage(): Promise<string> {
  const root = await baseRootfs();
  const layout = join(CACHE, `base-${root.split('/').at(-2)}`);
  if (
    await stat(join(layout, 'index.json')).then(
      () => true,
      () => false,
    )
  )
    return layout;
  console.log(`building the bench image from ${root} into ${layout} (once)`);
  await mkdir(CACHE, { recursive: true });
  await rm(layout, { recursive: true, force: true });
  await runCommand('umoci', ['init', '--layout', `${layout}.tmp`]);
  await makeImage(
    `${layout}.tmp`,
    'base',
    [
      async (r) => {
        await runCommand('cp', ['-a', `${root}/.`, r]);
      },
    ],
    ['--config.env', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
  );
  await runCommand('mv', [`${layout}.tmp`, layout]);
  return layout;
}

const layout = await ensureImage();
const registry = await TestRegistry.start();
const server = await ServerProcess.start({ SANDPIT_DRIVER: process.env.BENCH_DRIVER ?? 'container', SANDPIT_INSECURE_REGISTRIES: registry.host });
const api = new Api(server.url, server.key);
const scratch = join(server.dataDir, 'bench-raw');
try {
  const ref = `${registry.host}/bench/base:1`;
  await runCommand('skopeo', ['--insecure-policy', 'copy', '--dest-tls-verify=false', `oci:${layout}:base`, `docker://${ref}`]);
  const { stdout: size } = await runCommand('du', ['-sm', join(layout, 'blobs')]);
  console.log(`image: ${size.split('\t')[0]} MB compressed, driver ${process.env.BENCH_DRIVER ?? 'container'}`);

  const raw: number[] = [];
  const rawRoot: number[] = [];
  const coldReady: number[] = [];
  const coldFirst: number[] = [];
  const cachedReady: number[] = [];
  const cachedFirst: number[] = [];

  /** Posts the template, waits for ready, then creates a sandbox and runs its first command. */
  const buildAndRun = async (name: string): Promise<[number, number]> => {
    const t0 = performance.now();
    const res = await api.post('/templates', { name, from_image: ref });
    if (res.status !== 202) throw new Error(JSON.stringify(res.body));
    const logs = await fetch(`${server.url}/templates/${res.body.id}/builds/${res.body.build_id}/logs`, { headers: { 'x-api-key': server.key } });
    const last = parseSse(await logs.text()).events.at(-1);
    if (last.status !== 'ready') throw new Error(JSON.stringify(last));
    const ready = performance.now() - t0;
    const sb = (await api.post('/sandboxes', { from_template: name })).body;
    const r = await api.post(`/sandboxes/${sb.id}/exec`, { command: 'true' });
    if (r.body.exit_code !== 0) throw new Error(JSON.stringify(r.body));
    const first = performance.now() - t0;
    await api.del(`/sandboxes/${sb.id}`);
    return [ready, first];
  };

  for (let i = 0; i < RUNS; i++) {
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    raw.push(
      await timeIt(async () => {
        await runCommand('skopeo', ['--insecure-policy', 'copy', '--src-tls-verify=false', `docker://${ref}`, `oci:${join(scratch, 'oci')}:x`]);
        await runCommand('umoci', ['unpack', '--image', `${join(scratch, 'oci')}:x`, join(scratch, 'bundle')]);
      }),
    );
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    // What the server runs: the root only, no runtime config and no mtree of every file.
    rawRoot.push(
      await timeIt(async () => {
        await runCommand('skopeo', ['--insecure-policy', 'copy', '--src-tls-verify=false', `docker://${ref}`, `oci:${join(scratch, 'oci')}:x`]);
        await runCommand('umoci', ['raw', 'unpack', '--image', `${join(scratch, 'oci')}:x`, join(scratch, 'rootfs')]);
      }),
    );
    await rm(scratch, { recursive: true, force: true });

    // Cold: no blob, no unpacked root, no platform layer.
    for (const t of (await api.get('/templates')).body.templates.filter((x: { curated: boolean }) => !x.curated)) await api.del(`/templates/${t.id}`);
    await rm(join(server.dataDir, 'templates/images'), { recursive: true, force: true });
    await rm(join(server.dataDir, 'templates/layers'), { recursive: true, force: true });
    const [r1, f1] = await buildAndRun(`cold-${i}`);
    coldReady.push(r1);
    coldFirst.push(f1);
    const [r2, f2] = await buildAndRun(`cached-${i}`);
    cachedReady.push(r2);
    cachedFirst.push(f2);
  }

  report('skopeo copy + umoci unpack (raw)', raw);
  report('skopeo copy + umoci raw unpack (raw)', rawRoot);
  report('cold: POST /templates -> ready', coldReady);
  report('cold: -> first command in a sandbox', coldFirst);
  report('cached: POST /templates -> ready', cachedReady, '1000 ms');
  report('cached: -> first command in a sandbox', cachedFirst);
  ratio('cold ready vs raw tools', coldReady, raw);
  ratio('cold first command vs raw tools', coldFirst, raw);
  ratio('cold ready vs skopeo + umoci raw unpack', coldReady, rawRoot);
  console.log(`cached ready median ${median(cachedReady).toFixed(0)} ms (goal < 1000 ms)`);
} finally {
  await server.stop();
  await registry.stop();
}
