/**
 * Issue 24: listing a sandbox's changes when it changed 10,000 files (target: under 200 ms), per
 * engine, against a real server process: one page (the whole layer is walked for it), paging
 * through all of them (1,000 a page), and a prefix that holds 100 of them; next to `find` over the
 * same upper dir on the host, timed in the same run. Run: node bench/sandbox-changes.bench.ts
 * (BENCH_DRIVERS=container,gvisor; BENCH_RUNS, default 10; BENCH_FILES, default 10000).
 * The client, server and sandbox share the host's CPUs: other work moves these numbers.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { ratio, report, sample } from './stats.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const FILES = Number(process.env.BENCH_FILES ?? 10_000);

for (const driver of (process.env.BENCH_DRIVERS ?? 'container,gvisor').split(',')) {
  const server = await ServerProcess.start({ SANDPIT_DRIVER: driver });
  const api = new Api(server.url, server.key);
  try {
    const sb = (await api.post('/sandboxes', {})).body;
    // 100 directories of FILES/100 small files each.
    const made = await api.post(`/sandboxes/${sb.id}/exec`, {
      command: `cd /home/user && for d in $(seq 1 100); do mkdir d$d; (cd d$d && seq 1 ${FILES / 100} | sed 's/^/f/' | xargs touch); done`,
      timeout_s: 600,
    });
    if (made.body.exit_code !== 0) throw new Error(`making files failed: ${JSON.stringify(made.body)}`);
    const count = async (path = '') => {
      let n = 0;
      let cursor: string | undefined;
      do {
        const res = await api.get(`/sandboxes/${sb.id}/changes?limit=1000${path}${cursor ? `&cursor=${cursor}` : ''}`);
        if (res.status !== 200) throw new Error(`changes: ${res.status} ${JSON.stringify(res.body)}`);
        n += res.body.changes.length;
        cursor = res.body.next_cursor;
      } while (cursor);
      return n;
    };
    const total = await count();
    console.log(`${driver}: ${total} changes listed (${FILES} files and their directories made)`);
    const upper = join(server.dataDir, driver === 'gvisor' ? 'gvisor/layers' : 'layers', sb.id, 'upper');
    const raw = await sample(RUNS, async () => spawnSync('find', [upper], { stdio: 'ignore' }));
    const page = await sample(RUNS, () => api.get(`/sandboxes/${sb.id}/changes?limit=1000`));
    const all = await sample(RUNS, () => count());
    const prefix = await sample(RUNS, () => count('&path=/home/user/d7'));
    report(`${driver}: raw find over the upper dir`, raw);
    report(`${driver}: GET /changes, first page of 1000`, page, '< 200 ms');
    ratio(`${driver}: first page vs find`, page, raw);
    report(`${driver}: all ${total} changes, 1000 a page`, all);
    report(`${driver}: path=/home/user/d7 (${FILES / 100} files)`, prefix);
    await api.del(`/sandboxes/${sb.id}`);
  } finally {
    await server.stop();
  }
}
