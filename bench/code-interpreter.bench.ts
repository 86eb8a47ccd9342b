/**
 * Issue 23: the code interpreter on gVisor. `runCode("1+1")` in a warm context (target 30 ms), a matplotlib
 * chart returned as a PNG in a fresh context (cold, target 1.5 s) and a warm one (target 300 ms), through the
 * unmodified `@e2b/code-interpreter` on the E2B port and through Sandpit's `sandbox.code.run`; next to the
 * interpreter's own round trip measured inside the sandbox in the same run (no platform in the path).
 * Timed once the template's capture (which the first create asks for) is done. Prints medians; asserts nothing.
 * Run: node bench/code-interpreter.bench.ts   (BENCH_RUNS, default 20; BENCH_COLD, default 5)
 */
import { Sandbox } from '@e2b/code-interpreter';
import { SandpitClient, Sandbox as SandpitSandbox } from '../packages/sdk/src/index.ts';
import { freePort, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, report, sample, timeIt } from './stats.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const COLD = Number(process.env.BENCH_COLD ?? 5);
const CHART = 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.show()';

/** Times the interpreter's /execute from inside the sandbox: the floor any platform path adds to. */
const INSIDE = `
import json, time, urllib.request
def run(code):
    t = time.perf_counter()
    req = urllib.request.Request("http://127.0.0.1:49999/execute", data=json.dumps({"code": code}).encode(), headers={"content-type": "application/json"})
    body = urllib.request.urlopen(req).read()
    assert b"result" in body, body
    return (time.perf_counter() - t) * 1000
run("1+1")
print(json.dumps({"one": [run("1+1") for _ in range(${RUNS})], "chart": [run(${JSON.stringify(CHART)}) for _ in range(${Math.max(3, Math.round(RUNS / 4))})]}))
`;

const e2bPort = await freePort();
const server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_E2B_PORT: String(e2bPort), SANDPIT_RATE_LIMIT: '0', SANDPIT_SSH_PORT: '0', SANDPIT_WARM_POOL: '0' });
process.env.E2B_API_URL = `http://127.0.0.1:${e2bPort}`;
process.env.E2B_SANDBOX_URL = `http://127.0.0.1:${e2bPort}`;
process.env.E2B_API_KEY = server.key;
try {
  const sbx = await Sandbox.create({ timeoutMs: 600_000, requestTimeoutMs: 900_000 });
  // The first create has the template captured in the background: timed beside that, the figures measured the capture.
  const client = new SandpitClient({ apiUrl: server.url, apiKey: server.key });
  const captureDeadline = Date.now() + 600_000;
  while (!(await client.templates.get('platform/code-interpreter')).captured) {
    if (Date.now() > captureDeadline) throw new Error('platform/code-interpreter was not captured within 10 minutes');
    await new Promise((r) => setTimeout(r, 500));
  }
  const own = await SandpitSandbox.connect(sbx.sandboxId, { apiUrl: server.url, apiKey: server.key });
  const check = (text: string | undefined) => {
    if (text !== '2') throw new Error(`runCode answered ${text}`);
  };
  await sbx.runCode('1+1');
  const inside = JSON.parse((await sbx.commands.run(`python3 -c '${INSIDE.replaceAll("'", "'\\''")}'`)).stdout) as { one: number[]; chart: number[] };
  report('inside the sandbox: /execute 1+1', inside.one);
  const e2b = await sample(RUNS, async () => check((await sbx.runCode('1+1')).text));
  report('@e2b/code-interpreter runCode("1+1") warm', e2b, '30 ms');
  const ours = await sample(RUNS, async () => check((await own.code.run('1+1')).results[0]?.text));
  report('sandbox.code.run("1+1") warm', ours, '30 ms');
  console.log(`ratio runCode / inside: ${(median(e2b) / median(inside.one)).toFixed(2)}   code.run / inside: ${(median(ours) / median(inside.one)).toFixed(2)}`);

  const png = async (ctx?: Awaited<ReturnType<Sandbox['createCodeContext']>>) => {
    const ex = await sbx.runCode(CHART, ctx ? { context: ctx } : {});
    if (!ex.results.some((r) => r.png)) throw new Error(`no PNG: ${JSON.stringify(ex.error)}`);
  };
  report('inside the sandbox: matplotlib chart warm', inside.chart);
  report('runCode(matplotlib chart) -> PNG, warm', await sample(Math.max(3, Math.round(RUNS / 4)), () => png()), '300 ms');
  const cold: number[] = [];
  const coldWithCreate: number[] = [];
  for (let i = 0; i < COLD; i++) {
    let ctx: Awaited<ReturnType<Sandbox['createCodeContext']>> | undefined;
    const created = await timeIt(async () => {
      ctx = await sbx.createCodeContext();
    });
    const first = await timeIt(() => png(ctx));
    cold.push(first);
    coldWithCreate.push(created + first);
    await sbx.removeCodeContext(ctx!);
  }
  report('runCode(matplotlib chart) -> PNG, new context', cold, '1.5 s');
  report('createCodeContext + chart', coldWithCreate);
  const fresh = await sample(Math.min(COLD, 3), async () => {
    const s = await Sandbox.create({ timeoutMs: 600_000, requestTimeoutMs: 900_000 });
    try {
      if (!(await s.runCode(CHART)).results.some((r) => r.png)) throw new Error('no PNG');
    } finally {
      await s.kill();
    }
  });
  report('Sandbox.create + first chart (new sandbox)', fresh);
  await sbx.kill();
} finally {
  await server.stop();
}
