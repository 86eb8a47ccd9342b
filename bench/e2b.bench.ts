/**
 * Issue 15: what the E2B-compatible path costs over Sandpit's own API, in the same run against one
 * server (target: at most 1 ms more, for an exec round trip and for create -> first command).
 * Run: node bench/e2b.bench.ts   (BENCH_RUNS sets the samples, default 30 round trips and 8 creates;
 * BENCH_DRIVER=container|gvisor the engine). Runs of both paths are interleaved so load hits both alike.
 *
 * The SDK always runs `/bin/bash -l -c <cmd>` (a login shell), so SDK rows are compared with Sandpit
 * running the same command line; the raw Connect rows compare the two APIs with no shell at all.
 */
import { Sandbox } from 'e2b';
import { Api, freePort, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, report, timeIt } from './stats.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const CREATES = Math.max(2, Math.round(RUNS / 4));

function envelope(msg: unknown): Blob {
  const json = Buffer.from(JSON.stringify(msg));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(json.length, 1);
  return new Blob([head, json]);
}

const e2bPort = await freePort();
const server = await ServerProcess.start({ SANDPIT_E2B_PORT: String(e2bPort), SANDPIT_RATE_LIMIT: '0', ...(process.env.BENCH_DRIVER ? { SANDPIT_DRIVER: process.env.BENCH_DRIVER } : {}) });
const e2bUrl = `http://127.0.0.1:${e2bPort}`;
process.env.E2B_API_URL = e2bUrl;
process.env.E2B_SANDBOX_URL = e2bUrl;
process.env.E2B_API_KEY = server.key;
const api = new Api(server.url, server.key);
try {
  console.log(`driver: ${/driver: (\w+)/.exec(server.output)?.[1] ?? 'unknown'}`);
  const sb = (await api.post('/sandboxes', {})).body;
  const dp = { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.access_token };
  const sbx = await Sandbox.connect(sb.id, { timeoutMs: 600_000 });
  const token = (sbx as unknown as { envdAccessToken: string }).envdAccessToken;

  const ownExec = async (body: unknown) => {
    const r = await api.post('/exec', body, dp);
    if (r.status !== 200 || r.body.exit_code !== 0) throw new Error(`exec: ${r.status} ${JSON.stringify(r.body)}`);
  };
  const connectStart = async () => {
    const r = await fetch(`${e2bUrl}/process.Process/Start`, {
      method: 'POST',
      headers: { 'content-type': 'application/connect+json', 'e2b-sandbox-id': sb.id, 'e2b-sandbox-port': '49983', 'x-access-token': token },
      body: envelope({ process: { cmd: '/bin/true' }, stdin: false }),
    });
    const buf = Buffer.from(await r.arrayBuffer());
    if (!buf.includes('"exitCode":0') && !buf.includes('"exited":true')) throw new Error(`connect start: ${buf.toString()}`);
  };

  const own: number[] = [];
  const rawConnect: number[] = [];
  const ownBash: number[] = [];
  const sdk: number[] = [];
  // Warm both paths (connections, agent) before timing.
  for (let i = 0; i < 3; i++) await Promise.all([ownExec({ command: '/bin/true', args: [] }), connectStart(), sbx.commands.run('true')]);
  for (let i = 0; i < RUNS; i++) {
    own.push(await timeIt(() => ownExec({ command: '/bin/true', args: [] })));
    rawConnect.push(await timeIt(connectStart));
    ownBash.push(await timeIt(() => ownExec({ command: '/bin/bash', args: ['-l', '-c', 'true'] })));
    sdk.push(await timeIt(() => sbx.commands.run('true')));
  }
  report('exec /bin/true: Sandpit POST /exec', own);
  report('exec /bin/true: E2B Connect Process/Start', rawConnect);
  console.log(`  -> E2B path adds ${(median(rawConnect) - median(own)).toFixed(2)} ms (target <= 1 ms)`);
  report('exec bash -l -c true: Sandpit POST /exec', ownBash);
  report('exec bash -l -c true: e2b SDK commands.run', sdk);
  console.log(`  -> E2B path (SDK) adds ${(median(sdk) - median(ownBash)).toFixed(2)} ms (target <= 1 ms)`);

  const ownCreate: number[] = [];
  const sdkCreate: number[] = [];
  for (let i = 0; i < CREATES; i++) {
    let id = '';
    ownCreate.push(
      await timeIt(async () => {
        const c = await api.post('/sandboxes', {});
        id = c.body.id;
        const r = await new Api(server.url).post('/exec', { command: '/bin/bash', args: ['-l', '-c', 'true'] }, { 'x-platform-sandbox-id': id, 'x-access-token': c.body.access_token });
        if (r.body.exit_code !== 0) throw new Error('first command failed');
      }),
    );
    await api.del(`/sandboxes/${id}`);
    let s: Sandbox | undefined;
    sdkCreate.push(
      await timeIt(async () => {
        s = await Sandbox.create({ timeoutMs: 120_000 });
        await s.commands.run('true');
      }),
    );
    await s?.kill();
  }
  report('create -> first command: Sandpit API', ownCreate);
  report('create -> first command: e2b SDK', sdkCreate);
  console.log(`  -> E2B path adds ${(median(sdkCreate) - median(ownCreate)).toFixed(2)} ms (target <= 1 ms)`);
  await api.del(`/sandboxes/${sb.id}`);
} finally {
  await server.stop();
}
