/**
 * The CPU weight of all sandboxes together (the `sandpit` parent's cgroup v1 `cpu.shares`) against the
 * host's own processes, both ways round: how quickly the server answers a `GET /sandboxes/{id}` while
 * eight gVisor sandboxes are busy with system calls, and how much slower sandboxes start and resume
 * while three busy loops of the host's own (a build beside Sandpit, the platform's own work) hold the
 * CPUs. One server; the weight is set over the product's for each setting, rounds alternating. Beside
 * it, raw `runsc run /bin/true` quiet and beside the loops, in the same run. Prints medians; asserts nothing.
 *
 *   node bench/sandbox-weight.bench.ts    BENCH_SHARES (1024,512,256,128), BENCH_ROUNDS (2)
 */
import { writeFile } from 'node:fs/promises';
import { defaultRunsc } from '../packages/server/src/runtime/gvisor/engines.ts';
import { CGROUP_PARENT } from '../packages/server/src/runtime/host/cgroups.ts';
import { ensureBaseTemplate } from '../packages/server/src/templates/base-template.ts';
import { Api, IMAGE_DIR, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { busyLoops } from './host-load.ts';
import { rawRunscTrue } from './raw-engines.ts';
import { median, percentile, timeIt } from './stats.ts';

const SHARES = (process.env.BENCH_SHARES ?? '1024,512,256,128').split(',');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BUSY = 8;
const HOST_LOOPS = 3;
const STORM = `python3 -c 'import os\nfor _ in range(50000): os.stat("/")'`;
// A process holding 256 MiB, so a resume has memory to bring back.
const HOLD = `setsid python3 -c 'import time; b = bytearray(256 << 20); b[::4096] = b"x" * (len(b) >> 12); time.sleep(9999)' >/dev/null 2>&1 < /dev/null &`;

interface Row {
  get: number[];
  createExec: number[];
  resume: number[];
}

async function ok(p: Promise<{ status: number; body: any }>, what: string): Promise<any> {
  const res = await p;
  if (res.status >= 300 || (res.body?.exit_code ?? 0) !== 0) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const rootfs = await ensureBaseTemplate(IMAGE_DIR);
const runsc = await defaultRunsc();
const rawQuiet = median(await rawRunscTrue(runsc, 'systrap', rootfs, 5));
const endRawLoops = busyLoops(HOST_LOOPS);
const rawLoaded = median(await rawRunscTrue(runsc, 'systrap', rootfs, 5).finally(endRawLoops));
console.log(`raw \`runsc run /bin/true\`: median ${rawQuiet.toFixed(1)} ms quiet, ${rawLoaded.toFixed(1)} ms beside ${HOST_LOOPS} host loops; ${ROUNDS} rounds, settings alternating\n`);

const srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_RATE_LIMIT: '0', SANDPIT_MAX_ACTIVE_SANDBOXES: String(BUSY + 4) });
const api = new Api(srv.url, srv.key);
const rows = new Map<string, Row>(SHARES.map((s) => [s, { get: [], createExec: [], resume: [] }]));
try {
  const probe = (await ok(api.post('/sandboxes', {}), 'create')).id;
  const busy: string[] = [];
  for (let i = 0; i < BUSY; i++) busy.push((await ok(api.post('/sandboxes', {}), 'create')).id);
  const held = (await ok(api.post('/sandboxes', {}), 'create')).id;
  await ok(api.post(`/sandboxes/${held}/exec`, { command: HOLD }), 'hold');
  for (let r = 0; r < ROUNDS; r++) {
    for (const shares of SHARES) {
      const row = rows.get(shares)!;
      await writeFile(`/sys/fs/cgroup/cpu/${CGROUP_PARENT}/cpu.shares`, shares);
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          row.get.push(await timeIt(() => api.get(`/sandboxes/${probe}`)));
          await new Promise((res) => setTimeout(res, 20));
        }
      })();
      await Promise.all(busy.map((id) => ok(api.post(`/sandboxes/${id}/exec`, { command: STORM, timeout_s: 600 }), 'storm')));
      sampling = false;
      await sampler;

      await ok(api.post(`/sandboxes/${held}/pause`), 'pause');
      const endLoops = busyLoops(HOST_LOOPS);
      try {
        await new Promise((res) => setTimeout(res, 300));
        row.resume.push(await timeIt(() => ok(api.post(`/sandboxes/${held}/resume`), 'resume')));
        for (let i = 0; i < 3; i++) {
          let id = '';
          row.createExec.push(
            await timeIt(async () => {
              id = (await ok(api.post('/sandboxes', {}), 'create')).id;
              await ok(api.post(`/sandboxes/${id}/exec`, { command: 'true' }), 'exec');
            }),
          );
          await api.del(`/sandboxes/${id}`);
        }
      } finally {
        endLoops();
      }
    }
  }
} finally {
  await srv.stop();
}

for (const [shares, row] of rows) {
  console.log(
    `weight ${shares}`.padEnd(12),
    `GET beside ${BUSY} busy sandboxes: median ${median(row.get).toFixed(1)} ms, p99 ${percentile(row.get, 99).toFixed(1)} ms, max ${Math.max(...row.get).toFixed(0)} ms`,
    ` | beside ${HOST_LOOPS} host loops: create->exec ${median(row.createExec).toFixed(0)} ms (${(median(row.createExec) / rawLoaded).toFixed(2)}x raw), resume (256 MiB) ${median(row.resume).toFixed(0)} ms (${row.resume.map((x) => x.toFixed(0)).join(', ')})`,
  );
}
