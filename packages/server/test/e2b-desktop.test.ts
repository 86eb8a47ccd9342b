import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Sandbox } from '@e2b/desktop';
import { FIRST_USE_MS, firstUse } from './helpers/first-use.ts';
import { freePort, ServerProcess } from './helpers/server-process.ts';

/**
 * E2B's Desktop SDK from npm, unchanged, against Sandpit's E2B port on gVisor with its default
 * template name (`desktop`, Sandpit's platform/desktop): it starts its display and Xfce itself.
 */
let server: ServerProcess;
let sbx: Sandbox;

before(
  async () => {
    const port = await freePort();
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_E2B_PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    process.env.E2B_API_URL = url;
    process.env.E2B_SANDBOX_URL = url;
    process.env.E2B_API_KEY = server.key;
    // The first use builds the desktop template (minutes).
    sbx = await firstUse(() => Sandbox.create({ timeoutMs: 1_800_000, requestTimeoutMs: 1_800_000 }));
  },
  { timeout: FIRST_USE_MS + 120_000 },
);
after(async () => {
  await sbx?.kill().catch(() => undefined);
  await server?.stop();
});

test('its default template is the desktop, with the screen it asked for running Xfce', async () => {
  assert.equal((await Sandbox.getInfo(sbx.sandboxId)).templateId, 'desktop');
  const size = await sbx.getScreenSize();
  assert.ok(size.width > 0 && size.height > 0);
  const shot = Buffer.from(await sbx.screenshot());
  assert.equal(shot.subarray(1, 4).toString('latin1'), 'PNG');
  assert.equal(shot.readUInt32BE(16), size.width);
  assert.equal(shot.readUInt32BE(20), size.height);
});

/** The compression level a PNG's first IDAT's zlib header names (FLEVEL: 0 fastest ... 3 best). */
function zlibLevel(png: Buffer): number {
  for (let at = 8; at < png.length; ) {
    const len = png.readUInt32BE(at);
    if (png.subarray(at + 4, at + 8).toString('latin1') === 'IDAT') return png[at + 9]! >> 6;
    at += 12 + len;
  }
  throw new Error('no IDAT chunk');
}

test("its screenshots (`scrot --pointer FILE`) are read from the screen's file by Sandpit's agent; other scrot calls reach scrot", async () => {
  // The agent compresses at zlib's fastest level; scrot (imlib2) at its default.
  assert.equal(zlibLevel(Buffer.from(await sbx.screenshot())), 0, "the SDK's screenshot came from the agent");
  const direct = await sbx.commands.run('/usr/bin/scrot --pointer /tmp/by-scrot.png && base64 -w0 /tmp/by-scrot.png');
  assert.notEqual(zlibLevel(Buffer.from(direct.stdout, 'base64')), 0, "scrot's own PNGs differ, so the check above can fail");
  // A file that exists is not overwritten (scrot names another), and a JPEG is scrot's.
  const kept = await sbx.commands.run(
    'echo kept > /tmp/taken.png && scrot --pointer /tmp/taken.png && cat /tmp/taken.png && ls /tmp/taken_000.png && scrot --pointer /tmp/shot.jpg && head -c 3 /tmp/shot.jpg | od -An -tx1',
  );
  assert.equal(kept.stdout, 'kept\n/tmp/taken_000.png\n ff d8 ff\n');
});

test('mouse and keyboard: moves, clicks and typing reach an application', async () => {
  await sbx.moveMouse(200, 150);
  assert.deepEqual(await sbx.getCursorPosition(), { x: 200, y: 150 });
  // A Tk entry (xterm cannot open a pty under gVisor): Return writes what was typed to /tmp/e2b-typed.
  const script = 'wm title . e2btyping; wm geometry . 300x80; entry .e; pack .e; focus .e; bind .e <Return> {set f [open /tmp/e2b-typed w]; puts -nonewline $f [.e get]; close $f}';
  await sbx.files.write('/tmp/e2btyping.tcl', script);
  await (await sbx.commands.run('wish /tmp/e2btyping.tcl', { background: true })).disconnect();
  let id = '';
  for (let i = 0; i < 600 && !id; i++) {
    id = (await sbx.commands.run("xdotool search --onlyvisible --name '^e2btyping$' | head -1")).stdout.trim();
    if (!id) await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(id, 'the xterm window appeared');
  await sbx.commands.run(`xdotool windowmove --sync ${id} 100 100`);
  await sbx.leftClick(150, 150);
  assert.equal(await sbx.getCurrentWindowId(), id);
  assert.equal(await sbx.getWindowTitle(id), 'e2btyping');
  await sbx.write('typed by e2b');
  await sbx.press('enter');
  let typed = '';
  for (let i = 0; i < 100 && !typed; i++) {
    typed = (await sbx.commands.run('cat /tmp/e2b-typed 2>/dev/null || true')).stdout;
    if (!typed) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(typed, 'typed by e2b');
  await sbx.doubleClick(150, 150);
  await sbx.rightClick(150, 150);
  await sbx.scroll('down', 2);
  await sbx.drag([300, 300], [350, 350]);
  assert.deepEqual(await sbx.getCursorPosition(), { x: 350, y: 350 });
});

test('its stream starts noVNC on port 6080 and names a URL for it', async () => {
  await sbx.stream.start();
  const url = new URL(sbx.stream.getUrl({ viewOnly: true }));
  assert.match(url.hostname, /^6080-/);
  assert.equal(url.pathname, '/vnc.html');
  assert.equal(url.searchParams.get('view_only'), 'true');
  const page = await sbx.commands.run('curl -sf http://127.0.0.1:6080/vnc.html');
  assert.match(page.stdout, /noVNC/);
  // From outside through the E2B port, with no token, as a browser opens the URL (E2B's ports are public by default).
  const outside = await fetch(`${process.env.E2B_API_URL}${url.pathname}`, { headers: { 'e2b-sandbox-id': sbx.sandboxId, 'e2b-sandbox-port': '6080' } });
  assert.equal(outside.status, 200);
  assert.match(await outside.text(), /noVNC/);
  await sbx.stream.stop();
});
