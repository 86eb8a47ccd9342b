import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { exists } from '../src/optional-files.ts';
import { runCommand } from '../src/runtime/host/run-command.ts';
import { until } from './helpers/cluster-steps.ts';
import { TestRegistry } from './helpers/registry.ts';
import { Api, parseSse, ServerProcess } from './helpers/server-process.ts';
import { makeTestImages, pushImage } from './helpers/test-images.ts';

/**
 * Pulled images and template layers nothing uses are removed after SANDPIT_UNUSED_FILES_GRACE_S, and the
 * disk they held comes back; what a live template's current version or a sandbox stacks on stays. A real
 * server (container engine) pulls from a registry on loopback; only its own data dir is ever collected.
 */
const GRACE_S = 1;
let work: string;
let registry: TestRegistry;
let server: ServerProcess;
let api: Api;
let image: string;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'sandpit-unused-'));
  const layout = join(work, 'layout');
  [registry] = await Promise.all([TestRegistry.start(), makeTestImages(layout)]);
  image = `${registry.host}/test/debian:1`;
  await pushImage(layout, 'debian', image);
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_INSECURE_REGISTRIES: registry.host, SANDPIT_UNUSED_FILES_GRACE_S: String(GRACE_S) });
  api = new Api(server.url, server.key);
});

after(async () => {
  await server?.stop();
  await registry?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const layersDir = () => join(server.dataDir, 'templates/layers');
const imagesDir = () => join(server.dataDir, 'templates/images');
const names = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).filter((n) => !n.startsWith('.'));
const bytes = async (dir: string) => Number((await runCommand('du', ['-sb', dir])).stdout.split('\t')[0]);

/** Builds `name` from the test image with one step writing `mib` MiB, and waits for the end of its log. */
async function build(name: string, file: string, mib: number): Promise<void> {
  const res = await api.post('/templates', { name, from_image: image, steps: [{ type: 'run', command: `bash -c 'printf "%0${mib * 1024 * 1024}d" 0 > ${file}'`, user: 'root' }] });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const logs = await fetch(`${server.url}/templates/${res.body.id}/builds/${res.body.build_id}/logs`, { headers: { 'x-api-key': server.key } });
  const { events } = parseSse(await logs.text());
  assert.equal(events.at(-1)?.status, 'ready', JSON.stringify(events));
}

/** The layer whose files include `file` (a step's own layer). */
async function layerWith(file: string): Promise<string> {
  for (const k of await names(layersDir())) if (await exists(join(layersDir(), k, 'root', file))) return k;
  assert.fail(`no layer holds ${file}`);
}

test('layers and images no template or sandbox uses are removed after the grace period, and their disk comes back', async () => {
  await build('gc', '/v1.bin', 8);
  const [hex] = await names(join(imagesDir(), 'rootfs'));
  assert.ok(hex, 'the image was unpacked');
  const sb = (await api.post('/sandboxes', { from_template: 'gc' })).body as { id: string };
  assert.ok(sb.id);

  // Version 2 replaces version 1 in the store; the sandbox still stacks on version 1's step layer.
  await build('gc', '/v2.bin', 4);
  const step1 = await layerWith('v1.bin');
  const step2 = await layerWith('v2.bin');
  const kept = (await names(layersDir())).filter((k) => k !== step1);
  assert.ok(kept.includes(step2) && kept.length >= 2, 'version 2 has its step layer and the platform layer over the image');

  // An orphan (a layer of nothing) goes after the grace: the collector runs while the sandbox's layer stays.
  const orphan = 'f'.repeat(24);
  await mkdir(join(layersDir(), orphan, 'root'), { recursive: true });
  await writeFile(join(layersDir(), orphan, 'root', 'junk'), Buffer.alloc(1024 * 1024));
  await until('the orphan layer is collected', async () => !(await names(layersDir())).includes(orphan));
  assert.ok((await names(layersDir())).includes(step1), "the sandbox's template layer is kept");
  const r = await api.post(`/sandboxes/${sb.id}/exec`, { command: 'stat', args: ['-c', '%s', '/v1.bin'] });
  assert.equal(r.body.stdout, `${8 * 1024 * 1024}\n`, 'the sandbox still reads its template files');

  // The sandbox goes: version 1's step layer follows after the grace; the live version's files stay.
  const held = await bytes(layersDir());
  assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
  await until('the unused step layer is collected', async () => !(await names(layersDir())).includes(step1));
  const freed = held - (await bytes(layersDir()));
  assert.ok(freed >= 8 * 1024 * 1024, `the 8 MiB layer's disk came back (${freed} bytes)`);
  assert.deepEqual((await names(layersDir())).sort(), kept.sort());
  assert.deepEqual(await names(join(imagesDir(), 'rootfs')), [hex]);
  const again = (await api.post('/sandboxes', { from_template: 'gc' })).body as { id: string };
  assert.equal((await api.post(`/sandboxes/${again.id}/exec`, { command: 'stat', args: ['-c', '%s', '/v2.bin'] })).body.stdout, `${4 * 1024 * 1024}\n`);
  assert.equal((await api.del(`/sandboxes/${again.id}`)).status, 204);

  // The template goes: its layers, the unpacked image and the image's blobs all follow.
  const imageBytes = await bytes(imagesDir());
  assert.equal((await api.del('/templates/gc')).status, 204);
  // The blobs go in the same sweep, after the unpacked image: waited for too, not raced.
  await until(
    'every layer, the image and its blobs are collected',
    async () => (await names(layersDir())).length === 0 && (await names(join(imagesDir(), 'rootfs'))).length === 0 && (await names(join(imagesDir(), 'oci/blobs/sha256'))).length === 0,
  );
  const index = JSON.parse(await readFile(join(imagesDir(), 'oci/index.json'), 'utf8')) as { manifests: unknown[] };
  assert.deepEqual(index.manifests, []);
  assert.ok(imageBytes - (await bytes(imagesDir())) > 1024 * 1024, "the image's disk came back");
});
