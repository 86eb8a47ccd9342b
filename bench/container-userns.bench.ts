/**
 * What the container driver's user namespace costs a start: the sandbox's root mounted and
 * `crun run` of /bin/true in it, with and without the user namespace (idmapped layers, uid/gid
 * mappings), interleaved in one run so the host's load hits both alike. Next to it, the driver's
 * own create -> agent ready (which always uses the namespace) and raw `crun run` of the bare template.
 * Run: node bench/container-userns.bench.ts   (BENCH_RUNS, default 40)
 */
import { execFile } from 'node:child_process';
import { closeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ContainerDriver } from '../packages/server/src/runtime/container/container-driver.ts';
import { CgroupV1 } from '../packages/server/src/runtime/host/cgroups.ts';
import { ensureHugetlbMounted } from '../packages/server/src/runtime/host/host-checks.ts';
import { DEFAULT_ID_BASE, mountIdmappedOverlay, sandboxUserns } from '../packages/server/src/runtime/host/idmap.ts';
import { unmountUnder } from '../packages/server/src/runtime/host/mounts.ts';
import { ociConfig } from '../packages/server/src/runtime/host/oci-config.ts';
import { mountOverlay } from '../packages/server/src/runtime/host/overlay.ts';
import { IMAGE_DIR } from '../packages/server/test/helpers/server-process.ts';
import { ensureBaseTemplate } from '../packages/server/src/templates/base-template.ts';
import { median, ratio, report, timeIt } from './stats.ts';

const run = promisify(execFile);
const N = Number(process.env.BENCH_RUNS ?? 40);
const agentBinary = new URL('../packages/agent/build/sandpit-agent', import.meta.url).pathname;

async function main() {
  const templateRoot = await ensureBaseTemplate(IMAGE_DIR);
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-bench-userns-'));
  // crun sets up the root as sandbox root, which must pass through (the driver does this for its data dir).
  await chmod(dir, 0o711);
  const crunRoot = join(dir, 'crun');
  await ensureHugetlbMounted();
  await (await CgroupV1.detect()).prepareParent();
  const driver = new ContainerDriver({ dataDir: join(dir, 'driver'), agentBinary, layerPoolSize: 2 });
  try {
    await driver.init();
    const start = async (mapped: boolean): Promise<{ ns: number; mount: number; total: number }> => {
      const id = randomUUID();
      const sb = join(dir, id);
      const [rootfs, layer, runDir] = [join(sb, 'rootfs'), join(sb, 'layer'), join(sb, 'run')];
      await Promise.all([mkdir(rootfs, { recursive: true }), mkdir(join(layer, 'upper'), { recursive: true }), mkdir(join(layer, 'work'), { recursive: true }), mkdir(runDir, { recursive: true })]);
      if (mapped) await chown(runDir, DEFAULT_ID_BASE, DEFAULT_ID_BASE);
      try {
        let [ns, mount] = [0, 0];
        const total = await timeIt(async () => {
          let userns = -1;
          // The driver makes the namespace beside the layer's preparation; here it is timed on its own.
          if (mapped) ns = await timeIt(async () => void (userns = await sandboxUserns(DEFAULT_ID_BASE)));
          try {
            mount = await timeIt(() => (mapped ? mountIdmappedOverlay(userns, [templateRoot], layer, rootfs) : mountOverlay([templateRoot], join(layer, 'upper'), join(layer, 'work'), rootfs)));
          } finally {
            if (mapped) closeSync(userns);
          }
          const spec = { id, templateRoot, resources: { vcpuCount: 1, memoryMib: 512, diskMib: 1024 }, env: {}, hostname: 'bench' };
          const config = ociConfig({ spec, rootfs, runDir, agentBinary, nofile: 1024, ...(mapped ? { idBase: DEFAULT_ID_BASE } : {}) }) as { process: { args: string[] } };
          config.process.args = ['/bin/true'];
          await writeFile(join(sb, 'config.json'), JSON.stringify(config));
          await run('crun', ['--root', crunRoot, 'run', '--bundle', sb, id]);
        });
        return { ns, mount, total };
      } finally {
        await unmountUnder(sb);
        await rm(sb, { recursive: true, force: true });
      }
    };
    const plain: { ns: number; mount: number; total: number }[] = [];
    const mapped: { ns: number; mount: number; total: number }[] = [];
    const created: number[] = [];
    await start(true); // the first call makes the mapping's namespace
    for (let i = 0; i < N; i++) {
      plain.push(await start(false));
      mapped.push(await start(true));
      const id = randomUUID();
      created.push(await timeIt(() => driver.create({ id, templateRoot, resources: { vcpuCount: 1, memoryMib: 512, diskMib: 1024 }, env: {}, hostname: 'bench' })));
      await driver.destroy(id);
    }
    console.log(`Container driver user namespace: cost of a start (${N} runs each, interleaved)\n`);
    report(
      'overlay mount, plain layers',
      plain.map((x) => x.mount),
    );
    report(
      "the sandbox's user namespace (unshare)",
      mapped.map((x) => x.ns),
    );
    report(
      'overlay mount, idmapped layers',
      mapped.map((x) => x.mount),
    );
    report(
      'root + crun run /bin/true, no user namespace',
      plain.map((x) => x.total),
    );
    report(
      'root + crun run /bin/true, user namespace',
      mapped.map((x) => x.total),
    );
    ratio(
      'user namespace vs none',
      mapped.map((x) => x.total),
      plain.map((x) => x.total),
    );
    report('driver create -> agent ready (user namespace)', created);
    console.log(
      `\nmedian summary: start without ${median(plain.map((x) => x.total)).toFixed(1)} ms, with ${median(mapped.map((x) => x.total)).toFixed(1)} ms, driver create ${median(created).toFixed(1)} ms`,
    );
  } finally {
    for (const id of await driver.list()) await driver.destroy(id);
    await driver.close({ release: true });
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
