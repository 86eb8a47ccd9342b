import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actionArgv, parseGeometry, parseMouseLocation, queryRegion, screenshotArgv } from '../src/services/desktop/desktop-commands.ts';
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
  assert.deepEqual(screenshotArgv({ x: 1, y: 2, width: 3, height: 4 }).slice(-2), ['-a', '1,2,3,4']);
  assert.deepEqual(queryRegion({ x: '1', y: '2', width: '3', height: '4' }), { x: 1, y: 2, width: 3, height: 4 });
  assert.equal(queryRegion({ x: '1' }), null);
  assert.equal(queryRegion({ x: '1', y: '2', width: '0', height: '4' }), null);
  assert.equal(queryRegion({}), undefined);
  assert.deepEqual(parseMouseLocation('x:640 y:400 screen:0 window:4194311\n'), { x: 640, y: 400 });
  assert.equal(parseMouseLocation('garbage'), undefined);
  assert.deepEqual(parseGeometry('1280 800\n'), { width: 1280, height: 800 });
});
