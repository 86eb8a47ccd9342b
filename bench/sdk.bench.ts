/**
 * SDK overhead over a raw fetch for a data-plane exec of `true` (issue 5: under 0.5 ms),
 * interleaved in one run against the same sandbox. Run: ./sandpit bench bench/sdk.bench.ts
 */
import { Sandbox } from '../packages/sdk/src/index.ts';
import { ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, report } from './stats.ts';

const N = Number(process.env.BENCH_RUNS ?? 300);

async function main() {
  const server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_RATE_LIMIT: '0' });
  try {
    const sandbox = await Sandbox.create({ apiUrl: server.url, apiKey: server.key });
    const headers = { 'x-platform-sandbox-id': sandbox.id, 'x-access-token': sandbox.accessToken, 'content-type': 'application/json' };
    const raw = async () => {
      const res = await fetch(`${server.url}/exec`, { method: 'POST', headers, body: JSON.stringify({ command: 'true' }) });
      await res.json();
    };
    const sdk = () => sandbox.commands.run('true');
    for (let i = 0; i < 30; i++) {
      await raw();
      await sdk();
    }
    const rawT: number[] = [];
    const sdkT: number[] = [];
    for (let i = 0; i < N; i++) {
      let t0 = performance.now();
      await raw();
      rawT.push(performance.now() - t0);
      t0 = performance.now();
      await sdk();
      sdkT.push(performance.now() - t0);
    }
    console.log(`SDK overhead benchmark (container driver, ${N} interleaved runs)\n`);
    report('raw fetch POST /exec `true`', rawT);
    report('sdk sandbox.commands.run(`true`)', sdkT);
    console.log(`${'SDK overhead over raw fetch'.padEnd(44)} ${(median(sdkT) - median(rawT)).toFixed(3)} ms median   (target < 0.5 ms)`);
    await sandbox.kill();
  } finally {
    await server.stop();
  }
}

await main();
