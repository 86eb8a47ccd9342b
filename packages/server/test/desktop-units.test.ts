import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { DesktopService } from '../src/services/desktop/desktop.ts';
import { actionArgv, FRAMEBUFFER, framebufferArgv, parseGeometry, parseMouseLocation, queryRegion, screenshotArgv, screenshotPipedArgv } from '../src/services/desktop/desktop-commands.ts';
import { ViewTokens } from '../src/services/networking/view-tokens.ts';

const SB = '0b9ad3c2-7f60-4a53-9d43-6c1e2f1f2a10';

test('a view token opens its own sandbox and port until it expires', () => {
  const tokens = new ViewTokens(Buffer.alloc(32, 7));
  const t = tokens.issue(SB, 6091, 10_000);
  assert.equal(tokens.opens(t, SB, 6091, 9_999), true);
  assert.equal(tokens.opens(t, SB, 6091, 10_000), false, 'expired');
  assert.equal(tokens.opens(t, SB, 6090, 5_000), false, 'another port');
  assert.equal(tokens.opens(t, SB.replace('0b9a', '1b9a'), 6091, 5_000), false, 'another sandbox');
  assert.equal(tokens.opens(t.replace('_10000_', '_99999_'), SB, 6091, 5_000), false, 'a longer life is not signed');
  assert.equal(new ViewTokens(Buffer.alloc(32, 8)).opens(t, SB, 6091, 5_000), false, 'another key');
  assert.equal(tokens.opens(undefined, SB, 6091, 5_000), false);
});

test('actions become one xdotool argv, with text passed as one argument', () => {
  assert.deepEqual(actionArgv({ type: 'click', x: 10, y: 20, button: 'right' }), ['xdotool', 'mousemove', '10', '20', 'click', '--repeat', '1', '3']);
  assert.deepEqual(actionArgv({ type: 'click', count: 2 }), ['xdotool', 'click', '--repeat', '2', '1']);
  assert.deepEqual(actionArgv({ type: 'drag', from: [1, 2], to: [3, 4] }), ['xdotool', 'mousemove', '1', '2', 'mousedown', '1', 'mousemove', '3', '4', 'mouseup', '1']);
  assert.deepEqual(actionArgv({ type: 'scroll', direction: 'up', amount: 3 }), ['xdotool', 'click', '--repeat', '3', '4']);
  assert.deepEqual(actionArgv({ type: 'type', text: '$(reboot); "x"' }).at(-1), '$(reboot); "x"');
  assert.deepEqual(actionArgv({ type: 'open', target: 'https://example.com' }), ['setsid', '-f', 'xdg-open', 'https://example.com']);
});

test('screenshot regions and parsers', () => {
  assert.deepEqual(framebufferArgv('/agent', { x: 1, y: 2, width: 3, height: 4 }), ['/agent', '--screenshot', FRAMEBUFFER, '1', '2', '3', '4']);
  assert.deepEqual(framebufferArgv('/agent', undefined), ['/agent', '--screenshot', FRAMEBUFFER]);
  assert.deepEqual(screenshotArgv({ x: 1, y: 2, width: 3, height: 4 }).slice(-3), ['-a', '1,2,3,4', '/dev/stdout']);
  assert.deepEqual(screenshotPipedArgv({ x: 1, y: 2, width: 3, height: 4 }).slice(-2), ['-a', '1,2,3,4']);
  assert.deepEqual(queryRegion({ x: '1', y: '2', width: '3', height: '4' }), { x: 1, y: 2, width: 3, height: 4 });
  assert.equal(queryRegion({ x: '1' }), null);
  assert.equal(queryRegion({ x: '1', y: '2', width: '0', height: '4' }), null);
  assert.equal(queryRegion({}), undefined);
  assert.deepEqual(parseMouseLocation('x:640 y:400 screen:0 window:4194311\n'), { x: 640, y: 400 });
  assert.equal(parseMouseLocation('garbage'), undefined);
  assert.deepEqual(parseGeometry('1280 800\n'), { width: 1280, height: 800 });
});

/** A desktop whose exec runs nothing: each argv's answer is scripted, and every argv is recorded. */
function scriptedDesktop(answer: (argv: string[]) => { code: number; out?: string; err?: string }) {
  const ran: string[][] = [];
  const exec = {
    agentPath: '/.sandpit/agent',
    async open(_rec: unknown, body: { command: string; args?: string[] }) {
      const argv = [body.command, ...(body.args ?? [])];
      ran.push(argv);
      const proc = new EventEmitter();
      const a = answer(argv);
      setImmediate(() => {
        if (a.out) proc.emit('stdout', Buffer.from(a.out));
        if (a.err) proc.emit('stderr', Buffer.from(a.err));
        proc.emit('exit', { exitCode: a.code });
      });
      return { proc, timeoutS: 30 };
    },
  };
  const sandboxes = { get: async () => ({ id: SB }) };
  const desktop = new DesktopService({ sandboxes, exec, previews: {}, now: () => 0 } as unknown as ConstructorParameters<typeof DesktopService>[0]);
  return { desktop, ran };
}

const NO_FRAMEBUFFER = { code: 69, err: 'no framebuffer at /dev/shm/sandpit-display-0/Xvfb_screen0' };
const name = (argv: string[]) => (argv[1] === '--screenshot' ? 'framebuffer' : argv[0]);

test("a screenshot is read from the display's framebuffer file, and only without one asks the X server", async () => {
  const fb = scriptedDesktop((argv) => (argv[1] === '--screenshot' ? { code: 0, out: 'FB' } : { code: 0, out: 'SCROT' }));
  assert.equal((await fb.desktop.screenshot({} as never, SB, {})).toString(), 'FB');
  assert.deepEqual(fb.ran.map(name), ['framebuffer'], 'one process, no scrot');
  const outside = scriptedDesktop(() => ({ code: 64, err: 'the region lies outside the 1280x800 screen' }));
  await assert.rejects(outside.desktop.screenshot({} as never, SB, { x: '2000', y: '0', width: '10', height: '10' }), (err: Error & { status?: number }) => {
    assert.equal(err.status, 400);
    assert.match(err.message, /outside the 1280x800 screen/);
    return true;
  });
  assert.deepEqual(outside.ran.map(name), ['framebuffer'], 'a region outside the screen is not asked again of scrot');
});

test("without a framebuffer, a screenshot falls back to scrot, behind a pipe of its own when the agent's pipe refuses it (an older agent)", async () => {
  const older = scriptedDesktop((argv) => (argv[1] === '--screenshot' ? NO_FRAMEBUFFER : argv[0] === 'scrot' ? { code: 2, err: 'Saving to file /dev/stdout failed' } : { code: 0, out: 'PNG' }));
  assert.equal((await older.desktop.screenshot({} as never, SB, {})).toString(), 'PNG');
  assert.deepEqual(older.ran.map(name), ['framebuffer', 'scrot', '/bin/bash']);
  const current = scriptedDesktop((argv) => (argv[1] === '--screenshot' ? NO_FRAMEBUFFER : { code: 0, out: 'PNG' }));
  await current.desktop.screenshot({} as never, SB, {});
  assert.deepEqual(current.ran.map(name), ['framebuffer', 'scrot'], "one scrot process when the pipe is the user's");
  const none = scriptedDesktop((argv) => (argv[1] === '--screenshot' ? NO_FRAMEBUFFER : { code: 127 }));
  await assert.rejects(none.desktop.screenshot({} as never, SB, {}), /no desktop/);
  assert.deepEqual(none.ran.map(name), ['framebuffer', 'scrot'], 'no desktop is final');
});
