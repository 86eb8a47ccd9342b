import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { stripVTControlCharacters } from 'node:util';
import { type BarChart, type BoxAndWhiskerChart, type LineChart, type PieChart, type Result, Sandbox, type ScatterChart, type SuperChart, TimeoutError } from '@e2b/code-interpreter';
import { Sandbox as SandpitSandbox } from '../../sdk/src/index.ts';
import { Api, freePort, ServerProcess } from './helpers/server-process.ts';
import { FIRST_USE_MS, firstUse } from './helpers/first-use.ts';

/**
 * The unmodified `@e2b/code-interpreter` SDK against Sandpit's E2B port on gVisor (template
 * code-interpreter-v1 = platform/code-interpreter, built once and cached), and Sandpit's own
 * POST /sandboxes/{id}/code/run through its TS SDK.
 */
let server: ServerProcess;
const PNG = 'iVBORw0KGgo';

before(async () => {
  const port = await freePort();
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_E2B_PORT: String(port), SANDPIT_SSH_PORT: '0', SANDPIT_WARM_POOL: '0' });
  process.env.E2B_API_URL = `http://127.0.0.1:${port}`;
  process.env.E2B_SANDBOX_URL = `http://127.0.0.1:${port}`;
  process.env.E2B_API_KEY = server.key;
});
after(async () => {
  await server?.stop();
});

describe('@e2b/code-interpreter', () => {
  let sbx: Sandbox;
  before(
    async () => {
      // The first use builds the template (minutes, then cached).
      const created = await firstUse(() => Sandbox.create({ timeoutMs: 600_000, requestTimeoutMs: 900_000 }));
      // With the SDK's default request timeout: a refused runCode leaves its request timer running.
      sbx = await Sandbox.connect(created.sandboxId, { timeoutMs: 600_000 });
    },
    { timeout: FIRST_USE_MS + 120_000 },
  );
  after(async () => {
    await sbx?.kill();
  });

  test('python: streamed stdout, the value of the last expression, execution count', async () => {
    const seen: string[] = [];
    const ex = await sbx.runCode('import sys\nprint("hello")\nprint("to err", file=sys.stderr)\n1 + 1', { onStdout: (m) => void seen.push(m.line) });
    assert.equal(ex.text, '2');
    assert.deepEqual(ex.logs.stdout, ['hello\n']);
    assert.deepEqual(ex.logs.stderr, ['to err\n']);
    assert.deepEqual(seen, ['hello\n']);
    assert.equal(ex.error, undefined);
    assert.ok((ex.executionCount ?? 0) >= 1);
  });

  test('python: a matplotlib chart is a PNG result, a DataFrame a table, a string its text', async () => {
    const chart = await sbx.runCode('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.title("t")\nplt.show()');
    assert.equal(chart.error, undefined);
    const png = chart.results.find((r) => r.png);
    assert.ok(png, JSON.stringify(chart.results.map((r) => r.formats())));
    assert.ok(png.png!.startsWith(PNG));
    assert.equal(png.isMainResult, false);

    const df = await sbx.runCode('import pandas as pd\npd.DataFrame({"a": [1, 2], "b": ["x", "y"]})');
    assert.ok(df.results[0]?.html?.includes('<table'), JSON.stringify(df.results));
    assert.match(df.text ?? '', /a\s+b/);
    assert.deepEqual(df.results[0]?.data, { a: [1, 2], b: ['x', 'y'] });
    assert.equal((await sbx.runCode('"quoted"')).text, 'quoted');
  });

  test('python: a figure is also its chart as data (result.chart), shown or returned', async () => {
    const chartOf = async (code: string, main = false) => {
      const ex = await sbx.runCode(`import matplotlib.pyplot as plt\n${code}`);
      assert.equal(ex.error, undefined, ex.error?.traceback);
      const result = ex.results.find((r: Result) => r.chart && r.isMainResult === main);
      assert.ok(result, JSON.stringify(ex.results.map((r) => [r.isMainResult, r.formats()])));
      assert.ok(result.png?.startsWith(PNG));
      return result.chart;
    };

    const line = (await chartOf(
      "import datetime\ndays = [datetime.datetime(2024, 1, d) for d in (1, 2, 3)]\nplt.plot(days, [1, 4, 2], label='visits')\nplt.plot(days, [2, 2, 3], label='sales')\nplt.title('Traffic')\nplt.xlabel('Day')\nplt.ylabel('Load (kW)')\nplt.show()",
    )) as LineChart;
    assert.deepEqual([line.type, line.title, line.x_label, line.y_label, line.x_unit, line.y_unit], ['line', 'Traffic', 'Day', 'Load (kW)', null, 'kW']);
    assert.deepEqual([line.x_scale, line.y_scale], ['datetime', 'linear']);
    assert.deepEqual(
      line.elements.map((e) => e.label),
      ['visits', 'sales'],
    );
    assert.deepEqual(
      line.elements[0]!.points.map(([x, y]: [number | string, number | string]) => [new Date(x).toISOString(), y]),
      [
        ['2024-01-01T00:00:00.000Z', 1],
        ['2024-01-02T00:00:00.000Z', 4],
        ['2024-01-03T00:00:00.000Z', 2],
      ],
    );
    assert.ok(line.x_ticks.length > 0 && line.x_ticks.every((t) => typeof t === 'string' && !Number.isNaN(Date.parse(t))), JSON.stringify(line.x_ticks));
    assert.ok(line.y_ticks.every((t) => typeof t === 'number'));
    assert.equal(line.y_tick_labels.length, line.y_ticks.length);
    assert.ok(line.y_tick_labels.every((t) => typeof t === 'string'));

    // A figure as the cell's value: the main result.
    const scatter = (await chartOf("fig, ax = plt.subplots()\nax.scatter([1, 2, 3], [3, 1, 2], label='a')\nax.set_yscale('log')\nfig", true)) as ScatterChart;
    assert.deepEqual([scatter.type, scatter.title, scatter.x_label, scatter.x_scale, scatter.y_scale], ['scatter', null, null, 'linear', 'log']);
    assert.deepEqual(scatter.elements, [
      {
        label: 'a',
        points: [
          [1, 3],
          [2, 1],
          [3, 2],
        ],
      },
    ]);

    const bar = (await chartOf("plt.bar(['a', 'b'], [3, 5], label='2023')\nplt.bar(['a', 'b'], [1, 2], bottom=[3, 5], label='2024')\nplt.ylabel('Units [k]')\nplt.show()")) as BarChart;
    assert.deepEqual([bar.type, bar.x_label, bar.y_label, bar.y_unit], ['bar', null, 'Units [k]', 'k']);
    assert.deepEqual(bar.elements, [
      { label: 'a', group: '2023', value: 3 },
      { label: 'b', group: '2023', value: 5 },
      { label: 'a', group: '2024', value: 1 },
      { label: 'b', group: '2024', value: 2 },
    ]);

    const pie = (await chartOf("plt.pie([1, 3], labels=['x', 'y'])\nplt.title('Share')\nplt.show()")) as PieChart;
    assert.deepEqual([pie.type, pie.title], ['pie', 'Share']);
    assert.deepEqual(pie.elements, [
      { label: 'x', angle: 90, radius: 1 },
      { label: 'y', angle: 270, radius: 1 },
    ]);

    const box = (await chartOf("plt.boxplot([[1, 2, 3, 4, 5], [2, 4, 6, 8, 40]], labels=['p', 'q'])\nplt.ylabel('Score')\nplt.show()")) as BoxAndWhiskerChart;
    assert.deepEqual([box.type, box.y_label], ['box_and_whisker', 'Score']);
    assert.deepEqual(box.elements, [
      { label: 'p', min: 1, first_quartile: 2, median: 3, third_quartile: 4, max: 5, outliers: [] },
      { label: 'q', min: 2, first_quartile: 4, median: 6, third_quartile: 8, max: 8, outliers: [40] },
    ]);

    const sup = (await chartOf(
      "fig, (a, b) = plt.subplots(1, 2)\nfig.suptitle('Both')\na.plot([1, 2], [3, 4])\na.set_title('left')\nb.bar(['u'], [7])\nb.set_title('right')\nplt.show()",
    )) as SuperChart;
    assert.deepEqual([sup.type, sup.title], ['superchart', 'Both']);
    assert.deepEqual(
      sup.elements.map((c) => [c.type, c.title]),
      [
        ['line', 'left'],
        ['bar', 'right'],
      ],
    );
    assert.deepEqual((sup.elements[0] as LineChart).elements[0]!.points, [
      [1, 3],
      [2, 4],
    ]);
    assert.deepEqual((sup.elements[1] as BarChart).elements, [{ label: 'u', group: '0', value: 7 }]);

    const unknown = await chartOf("plt.imshow([[0, 1], [1, 0]])\nplt.title('img')\nplt.show()");
    assert.deepEqual(unknown, { type: 'unknown', title: 'img', elements: [] });
  });

  test('python: an exception is an error with name, value and traceback', async () => {
    const ex = await sbx.runCode('def f():\n    return 1 / 0\nf()');
    assert.equal(ex.error?.name, 'ZeroDivisionError');
    assert.equal(ex.error?.value, 'division by zero');
    // IPython colours its tracebacks (as on E2B).
    const plain = stripVTControlCharacters(ex.error?.traceback ?? '');
    assert.match(plain, /----> 3 f\(\)/);
    assert.match(plain, /ZeroDivisionError: division by zero/);
    let reported = '';
    await sbx.runCode('raise ValueError("bad")', { onError: (e) => void (reported = e.name) });
    assert.equal(reported, 'ValueError');
  });

  test('contexts: create, keep state apart, list, restart, remove', async () => {
    await sbx.runCode('x = 1');
    const ctx = await sbx.createCodeContext({ cwd: '/tmp' });
    assert.equal(ctx.language, 'python');
    const missing = await sbx.runCode('x', { context: ctx });
    assert.equal(missing.error?.value, "name 'x' is not defined");
    await sbx.runCode('y = 5', { context: ctx });
    assert.equal((await sbx.runCode('import os; os.getcwd()', { context: ctx })).text, '/tmp');
    assert.equal((await sbx.runCode('y', { context: ctx })).text, '5');
    assert.ok((await sbx.listCodeContexts()).some((c) => c.id === ctx.id && c.cwd === '/tmp'));
    await sbx.restartCodeContext(ctx);
    assert.equal((await sbx.runCode('y', { context: ctx })).error?.name, 'NameError');
    await sbx.removeCodeContext(ctx.id);
    assert.ok(!(await sbx.listCodeContexts()).some((c) => c.id === ctx.id));
    await assert.rejects(sbx.runCode('1', { context: ctx, requestTimeoutMs: 10_000 }));
    assert.equal((await sbx.runCode('x')).text, '1');
  });

  test('javascript and bash', async () => {
    const js = await sbx.runCode('const a = [1, 2, 3];\nconsole.log("sum", a.reduce((s, n) => s + n, 0));\na.length * 2', { language: 'javascript' });
    assert.deepEqual(js.logs.stdout, ['sum 6\n']);
    assert.equal(js.text, '6');
    assert.equal((await sbx.runCode('a.length', { language: 'js' })).text, '3');
    const thrown = await sbx.runCode('throw new TypeError("nope")', { language: 'javascript' });
    assert.deepEqual([thrown.error?.name, thrown.error?.value], ['TypeError', 'nope']);
    assert.equal((await sbx.runCode('await new Promise((r) => setTimeout(() => r(7), 10))', { language: 'javascript' })).text, '7');

    const sh = await sbx.runCode('V=kept; echo "$V from $(pwd)"; echo warn >&2', { language: 'bash' });
    assert.deepEqual([sh.logs.stdout.join(''), sh.logs.stderr.join('')], ['kept from /home/user\n', 'warn\n']);
    assert.equal((await sbx.runCode('echo $V', { language: 'bash' })).logs.stdout.join(''), 'kept\n');
    assert.equal((await sbx.runCode('false', { language: 'bash' })).error?.value, 'exit status 1');
    assert.equal((await sbx.runCode('!pwd')).logs.stdout.join('').trim(), '/home/user');
  });

  test('typescript: types removed by Node, enums transformed, state kept between runs; a type syntax error is an error', async () => {
    const ts = await sbx.runCode('const message: string = "Hello World!"; console.log(message)', { language: 'ts' });
    assert.deepEqual(ts.logs.stdout, ['Hello World!\n']);
    assert.equal(ts.logs.stderr.length, 0, 'no warning about the experimental type stripping');
    assert.equal((await sbx.runCode('process.cwd()', { language: 'typescript' })).text, '/home/user');
    assert.equal((await sbx.runCode('enum Color { Red, Green }\ninterface P { c: Color }\nconst p: P = { c: Color.Green };\np.c', { language: 'ts' })).text, '1');
    assert.equal((await sbx.runCode('message.length as number', { language: 'ts' })).text, '12');
    const bad = await sbx.runCode('const bad: = 1', { language: 'ts' });
    assert.equal(bad.error?.name, 'SyntaxError');
    // Its own kernel: javascript does not see the typescript context's names.
    assert.equal((await sbx.runCode('typeof message', { language: 'js' })).text, 'undefined');
  });

  test('r: started on its first run, in the home directory; env vars for one run; an error is an error', async () => {
    const wd = await sbx.runCode('getwd()', { language: 'r' });
    assert.equal(wd.results[0]?.text?.trim(), '[1] "/home/user"');
    const env = await sbx.runCode('Sys.getenv("R_ONE_RUN")', { language: 'r', envs: { R_ONE_RUN: 'set "quoted"' } });
    assert.equal(env.results[0]?.text?.trim(), '[1] "set \\"quoted\\""');
    assert.equal((await sbx.runCode('Sys.getenv("R_ONE_RUN", unset = "gone")', { language: 'r' })).results[0]?.text?.trim(), '[1] "gone"');
    const out = await sbx.runCode('x <- c(1, 2, 3)\ncat(sum(x), "\\n")', { language: 'r' });
    assert.deepEqual(out.logs.stdout, ['6 \n']);
    const failed = await sbx.runCode('stop("nope")', { language: 'r' });
    assert.match(String(failed.error?.value), /nope/);
  });

  test('env vars apply to one run only', async () => {
    const ex = await sbx.runCode('import os; os.environ.get("ONLY_NOW")', { envs: { ONLY_NOW: 'yes' } });
    assert.equal(ex.text, 'yes');
    assert.equal((await sbx.runCode('import os; os.environ.get("ONLY_NOW", "unset")')).text, 'unset');
  });

  test('a kernel that dies is reported and restarted; a runaway allocation fails in the kernel; the sandbox lives', async () => {
    const ctx = await sbx.createCodeContext();
    await sbx.runCode('z = 3', { context: ctx });
    const died = await sbx.runCode('import os; os._exit(1)', { context: ctx });
    assert.equal(died.error?.name, 'KernelDied');
    const after = await sbx.runCode('z', { context: ctx });
    assert.equal(after.error?.name, 'NameError');
    assert.equal((await sbx.runCode('2 * 21', { context: ctx })).text, '42');

    const hog = await sbx.runCode('hog = []\nwhile True:\n    hog.append(bytearray(50 * 1024 * 1024))', { context: ctx });
    assert.ok(hog.error, 'the allocation must fail');
    assert.ok(['MemoryError', 'KernelDied'].includes(hog.error.name), hog.error.name);
    assert.equal((await sbx.runCode('7', { context: ctx })).text, '7');
    assert.equal(await sbx.isRunning(), true);
    const js = await sbx.runCode('process.exit(3)', { language: 'javascript' });
    assert.equal(js.error?.name, 'ProcessExited');
    // A string result is reported without its quotes, as E2B does.
    assert.equal((await sbx.runCode('typeof a', { language: 'javascript' })).text, 'undefined');
  });

  test('kernels run as root, as on E2B: a context may start in /root; the home stays /home/user', async () => {
    const ctx = await sbx.createCodeContext({ cwd: '/root' });
    assert.equal(ctx.cwd, '/root');
    assert.equal((await sbx.runCode('import os; os.getcwd(), os.getuid()', { context: ctx })).text, "('/root', 0)");
    assert.equal((await sbx.runCode('whoami; pwd', { language: 'bash' })).logs.stdout.join(''), 'root\n/home/user\n');
    await sbx.removeCodeContext(ctx.id);
  });

  test('a Pillow image saved to a file is shown; one saved to a stream is not', async () => {
    const saved = await sbx.runCode('from PIL import Image\nImage.new("RGB", (4, 4), "red").save("/tmp/red.png")');
    assert.equal(saved.error, undefined, saved.error?.traceback);
    assert.ok(saved.results[0]?.png?.startsWith(PNG), JSON.stringify(saved.results.map((r) => r.formats())));
    const streamed = await sbx.runCode('import io\nImage.new("RGB", (4, 4)).save(io.BytesIO(), "PNG")');
    assert.deepEqual(streamed.results, []);
  });

  test('javascript: ES imports, kept by later runs', async () => {
    const ex = await sbx.runCode(
      "import { readFileSync } from 'fs'\nimport path, { join as j } from 'node:path'\nimport * as os from 'os'\nconsole.log(typeof readFileSync, j('a', 'b'), typeof os.cpus)",
      {
        language: 'javascript',
      },
    );
    assert.equal(ex.error, undefined, ex.error?.traceback);
    assert.deepEqual(ex.logs.stdout, ['function a/b function\n']);
    // console.log returns nothing, so the cell has no value.
    assert.deepEqual(ex.results, []);
    assert.equal((await sbx.runCode('typeof path.join', { language: 'javascript' })).text, 'function');
  });

  test('a run whose caller left (its timeout) is interrupted: the next run neither waits for it nor is dropped', async () => {
    await sbx.runCode('kept_through = 5');
    await assert.rejects(sbx.runCode('import time; time.sleep(300)', { timeoutMs: 2_000 }), TimeoutError);
    // At once: queued behind the interrupted run, it must still run (an error aborts the kernel's queue by default).
    const next = await sbx.runCode('kept_through + 1', { timeoutMs: 15_000, requestTimeoutMs: 15_000 });
    assert.equal(next.text, '6');
  });

  test('state is kept across pause and resume (python, javascript, r)', async () => {
    await sbx.runCode('kept = [1, 2, 3]');
    await sbx.runCode('let keptJs = 9', { language: 'javascript' });
    // R's kernel started from a file: a kernel given -e holds a deleted file, and the pause would be refused.
    await sbx.runCode('keptR <- 11', { language: 'r' });
    await sbx.pause();
    const again = await Sandbox.connect(sbx.sandboxId);
    assert.equal((await again.runCode('sum(kept)')).text, '6');
    assert.equal((await again.runCode('keptJs', { language: 'javascript' })).text, '9');
    assert.equal((await again.runCode('keptR + 1', { language: 'r' })).results[0]?.text?.trim(), '[1] 12');
  });
});

describe("the sandbox's own env in kernels; a kill during a run", () => {
  const expectEnv = async (s: Sandbox, value: string) => {
    assert.deepEqual(
      [
        (await s.runCode('import os; os.environ.get("SBX_ENV")')).text,
        (await s.runCode('process.env.SBX_ENV', { language: 'javascript' })).text,
        (await s.runCode('echo "$SBX_ENV"', { language: 'bash' })).logs.stdout.join(''),
      ],
      [value, value, `${value}\n`],
    );
  };

  test('Sandbox.create envs are seen in python, javascript and bash; a run env overrides them for that run', async () => {
    const s = await Sandbox.create({ envs: { SBX_ENV: 'from create' } });
    try {
      await expectEnv(s, 'from create');
      assert.equal((await s.runCode('import os; os.environ["SBX_ENV"]', { envs: { SBX_ENV: 'this run' } })).text, 'this run');
      assert.equal((await s.runCode('echo "$SBX_ENV"', { language: 'bash', envs: { SBX_ENV: 'this run' } })).logs.stdout.join(''), 'this run\n');
      await expectEnv(s, 'from create');
    } finally {
      await s.kill();
    }
  });

  test('restored from a capture taken before the env existed: the kernels get it too', { timeout: 600_000 }, async () => {
    // A team template on platform/code-interpreter is captured (gVisor) with the interpreter and its kernels running.
    const api = new Api(server.url, server.key);
    const made = await api.post('/templates', { name: 'ci-env-capture', base: 'platform/code-interpreter', steps: [{ type: 'run', command: 'true' }] });
    assert.equal(made.status, 202, JSON.stringify(made.body));
    try {
      for (let i = 0; !(await api.get(`/templates/${made.body.id}`)).body.captured; i++) {
        assert.ok(i < 240, 'the template was not captured within 8 minutes');
        await sleep(2000);
      }
      const s = await Sandbox.create('ci-env-capture', { envs: { SBX_ENV: 'after the capture' } });
      try {
        // Restored, not booted: the agent, started for the capture, never had the env in its own.
        const agentEnv = await s.commands.run('tr "\\0" "\\n" < /proc/1/environ');
        assert.ok(!agentEnv.stdout.includes('SBX_ENV'), 'the sandbox was booted, not restored');
        await expectEnv(s, 'after the capture');
        assert.equal((await s.runCode('import os; os.environ["SBX_ENV"]', { envs: { SBX_ENV: 'this run' } })).text, 'this run');
        await expectEnv(s, 'after the capture');
      } finally {
        await s.kill();
      }
    } finally {
      await api.del(`/templates/${made.body.id}`);
    }
  });

  // A proxy that left the response open once the sandbox was gone would keep the run waiting: the timeout fails it.
  test("a sandbox killed during a run: runCode fails with the SDK's message for it", { timeout: 120_000 }, async () => {
    const s = await Sandbox.create();
    const run = s.runCode('import time; time.sleep(300)', { timeoutMs: 300_000 });
    await sleep(2000);
    await s.kill();
    await assert.rejects(run, (err: Error) => err instanceof TimeoutError && /sandbox was killed while the request was in progress/.test(err.message));
  });
});

describe("Sandpit's own endpoint (TS SDK)", () => {
  let sbx: SandpitSandbox;
  before(async () => {
    sbx = await SandpitSandbox.create({ apiUrl: server.url, apiKey: server.key, from_template: 'platform/code-interpreter', timeoutMs: 900_000 });
  });
  after(async () => {
    await sbx?.kill();
  });

  test('sandbox.code.run streams output and ends with the results', async () => {
    const out: string[] = [];
    const res = await sbx.code.run('print("a")\n40 + 2', { onStdout: (t) => void out.push(t) });
    assert.deepEqual(out, ['a\n']);
    assert.equal(res.results[0]?.text, '42');
    assert.equal(res.error, undefined);
    const chart = await sbx.code.run('import matplotlib.pyplot as plt\nplt.bar(["a", "b"], [1, 2])\nplt.show()');
    assert.ok(chart.results.some((r) => r.png?.startsWith(PNG)));
    assert.ok(
      chart.results.some((r) => (r.chart as { type?: string } | undefined)?.type === 'bar'),
      JSON.stringify(chart.results.map(Object.keys)),
    );
    const err = await sbx.code.run('undefined_name');
    assert.equal(err.error?.name, 'NameError');
    assert.equal((await sbx.code.run('echo $((6 * 7))', { language: 'bash' })).stdout.join(''), '42\n');
  });

  test('contexts, and bad input answered in the envelope', async () => {
    const ctx = await sbx.code.createContext({ language: 'javascript' });
    await sbx.code.run('var n = 4', { contextId: ctx.id });
    assert.equal((await sbx.code.run('n * 2', { contextId: ctx.id })).results[0]?.text, '8');
    assert.ok((await sbx.code.listContexts()).some((c) => c.id === ctx.id && c.language === 'javascript'));
    await sbx.code.restartContext(ctx.id);
    assert.equal((await sbx.code.run('typeof n', { contextId: ctx.id })).results[0]?.text, 'undefined');
    await sbx.code.removeContext(ctx.id);
    await assert.rejects(sbx.code.run('1', { contextId: ctx.id }), (e: { status?: number; code?: string }) => e.status === 404);
    await assert.rejects(sbx.code.run('1', { contextId: 'x', language: 'python' }), (e: { status?: number }) => e.status === 400);

    const sse = await fetch(`${server.url}/sandboxes/${sbx.id}/code/run`, {
      method: 'POST',
      headers: { 'x-api-key': server.key, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ code: '1 + 1' }),
    });
    assert.match(sse.headers.get('content-type') ?? '', /text\/event-stream/);
    const events = (await sse.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    assert.equal(events.at(-1).type, 'end');
    assert.equal(events.at(-1).results[0].text, '2');
  });

  test('a sandbox without the interpreter answers 409', async () => {
    const plain = await SandpitSandbox.create({ apiUrl: server.url, apiKey: server.key });
    try {
      await assert.rejects(plain.code.run('1'), (e: { status?: number }) => e.status === 409);
    } finally {
      await plain.kill();
    }
  });
});
