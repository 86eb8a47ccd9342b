/**
 * A computer-use agent's loop on platform/desktop through a real server on gVisor: a 1280x800
 * screenshot, a click until a screenshot shows its change, and create -> first screenshot (restored from
 * the template's capture, which the first create asks for). Next to
 * them, in the same run: the raw engine (`runsc run /bin/true`), and inside the sandbox the agent's
 * PNG of the framebuffer file alone (what the API's screenshot runs) and scrot alone (what it ran
 * before, still its fallback). And E2B's Desktop SDK (`@e2b/desktop`, its default template) on the E2B port:
 * its screenshot (`scrot --pointer FILE`, which the template answers from the framebuffer file, then a file
 * read and remove), next to `/usr/bin/scrot --pointer` alone inside. Prints medians; asserts nothing.
 * Run: ./sandpit bench bench/desktop.bench.ts (BENCH_RUNS, default 10).
 */
import { Sandbox as E2bDesktop } from '@e2b/desktop';
import { defaultRunsc } from '../packages/server/src/runtime/gvisor/engines.ts';
import { AGENT_PATH } from '../packages/server/src/runtime/host/oci-config.ts';
import { framebufferArgv } from '../packages/server/src/services/desktop/desktop-commands.ts';
import { ensureBaseTemplate } from '../packages/server/src/templates/base-template.ts';
import { freePort, IMAGE_DIR, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { Sandbox, SandpitClient } from '../packages/sdk/src/index.ts';
import { rawRunscTrue } from './raw-engines.ts';
import { median, ratio, report, timeIt } from './stats.ts';

const N = Number(process.env.BENCH_RUNS ?? 10);

/** Milliseconds `cmd` took inside a sandbox, timed there (no round trip), through a client's way of running a command. */
async function timedInside(run: (command: string) => Promise<{ stdout: string }>, cmd: string): Promise<number> {
  return Number((await run(`a=$(date +%s%N); ${cmd}; b=$(date +%s%N); echo $(( (b - a) / 1000 ))`)).stdout.trim()) / 1000;
}

const rootfs = await ensureBaseTemplate(IMAGE_DIR);
const raw = await rawRunscTrue(await defaultRunsc(), 'systrap', rootfs, N);
const e2bPort = await freePort();
const srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_E2B_PORT: String(e2bPort) });
try {
  const client = new SandpitClient({ apiUrl: srv.url, apiKey: srv.key, timeoutMs: 1_800_000 });
  // The first create builds (or finds) the template and boots; it is not measured. It also has the
  // template captured: the creates measured are the warm ones, restored from that capture.
  const bootStart = performance.now();
  await (await Sandbox.create({ client, from_template: 'platform/desktop' })).kill();
  const boot = performance.now() - bootStart;
  const captureDeadline = Date.now() + 600_000;
  while (!(await client.templates.get('platform/desktop')).captured) {
    if (Date.now() > captureDeadline) throw new Error('platform/desktop was not captured within 10 minutes');
    await new Promise((r) => setTimeout(r, 500));
  }

  const firstShot: number[] = [];
  for (let i = 0; i < N; i++) {
    let sb: Sandbox | undefined;
    firstShot.push(
      await timeIt(async () => {
        sb = await Sandbox.create({ client, from_template: 'platform/desktop' });
        await sb.desktop.screenshot();
      }),
    );
    await sb?.kill();
  }

  // The sandboxes just killed are torn down after their delete answered: let that finish first.
  await new Promise((r) => setTimeout(r, 10_000));
  const sb = await Sandbox.create({ client, from_template: 'platform/desktop' });
  try {
    // The first screenshot after a restore faults scrot's pages in; then the API's and scrot's alone, in turns.
    await sb.desktop.screenshot();
    const shots: number[] = [];
    const inside: number[] = [];
    const framebuffer: number[] = [];
    const alone = (cmd: string) => timedInside((c) => sb.exec(c), cmd);
    for (let i = 0; i < N; i++) {
      shots.push(await timeIt(() => sb.desktop.screenshot()));
      inside.push(await alone('scrot -o -z -q 10 /tmp/b.png'));
      framebuffer.push(await alone(`${framebufferArgv(AGENT_PATH, undefined).join(' ')} > /tmp/f.png`));
    }
    // A right click on the desktop opens its menu; the figure ends when a screenshot differs from before.
    const clicks: number[] = [];
    for (let i = 0; i < N; i++) {
      await sb.desktop.key('Escape');
      // The pointer is drawn in the screenshot: it goes there first, so only the menu changes the region.
      await sb.desktop.moveMouse(600, 380);
      const before = Buffer.from(await sb.desktop.screenshot({ region: { x: 600, y: 380, width: 200, height: 200 } }));
      clicks.push(
        await timeIt(async () => {
          await sb.desktop.rightClick({ x: 600, y: 380 });
          for (const end = Date.now() + 30_000; ; ) {
            if (Date.now() > end) throw new Error('no screenshot showed the menu of a right click within 30 s');
            const now = Buffer.from(await sb.desktop.screenshot({ region: { x: 600, y: 380, width: 200, height: 200 } }));
            if (!now.equals(before)) return;
          }
        }),
      );
    }
    await sb.desktop.key('Escape');
    console.log(`desktop on gVisor, n=${N}, load ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`);
    report('raw: runsc run /bin/true', raw);
    report('scrot alone, inside the sandbox', inside);
    report("the agent's PNG of the framebuffer alone, inside the sandbox", framebuffer);
    report('screenshot 1280x800 (API, PNG)', shots, '150 ms');
    ratio('screenshot / raw runsc run', shots, raw);
    report('click -> changed screenshot', clicks, '250 ms');
    report('create -> first screenshot (restored from the capture)', firstShot, '2000 ms warm');
    console.log(`the first create (booted, template already built): ${boot.toFixed(0)} ms`);
    console.log(`screenshot overhead over the framebuffer's PNG alone: ${(median(shots) - median(framebuffer)).toFixed(1)} ms`);
  } finally {
    await sb.kill();
  }
  const e2bUrl = `http://127.0.0.1:${e2bPort}`;
  // As the SDK's users point it elsewhere than E2B's cloud.
  Object.assign(process.env, { E2B_API_URL: e2bUrl, E2B_SANDBOX_URL: e2bUrl, E2B_API_KEY: srv.key });
  const sbx = await E2bDesktop.create({ timeoutMs: 1_800_000, requestTimeoutMs: 1_800_000 });
  try {
    await sbx.screenshot();
    const sdk: number[] = [];
    const sdkScrot: number[] = [];
    const scrotAlone: number[] = [];
    const alone = (cmd: string) => timedInside((c) => sbx.commands.run(c), cmd);
    for (let i = 0; i < N; i++) {
      sdk.push(await timeIt(() => sbx.screenshot()));
      // The SDK's own steps with scrot itself answering: what its screenshot cost before.
      sdkScrot.push(
        await timeIt(async () => {
          await sbx.commands.run('/usr/bin/scrot --pointer /tmp/e2b-shot.png');
          await sbx.files.read('/tmp/e2b-shot.png', { format: 'bytes' });
          await sbx.files.remove('/tmp/e2b-shot.png');
        }),
      );
      scrotAlone.push(await alone('/usr/bin/scrot --pointer /tmp/e2b-scrot.png; rm -f /tmp/e2b-scrot.png'));
    }
    report('E2B Desktop SDK: screenshot() (scrot --pointer answered from the framebuffer, file read, remove)', sdk);
    report('E2B Desktop SDK: the same steps with /usr/bin/scrot (before)', sdkScrot);
    report('E2B Desktop SDK: /usr/bin/scrot --pointer alone, inside', scrotAlone);
  } finally {
    await sbx.kill();
  }
} finally {
  await srv.stop();
}
