import type { DesktopAction, Region, ScreenshotQuery } from '../../schemas/desktop.ts';

/** xdotool's button numbers. */
const BUTTONS = { left: '1', middle: '2', right: '3' } as const;
const WHEEL = { up: '4', down: '5', left: '6', right: '7' } as const;

const moveTo = (x: number | undefined, y: number | undefined): string[] => (x !== undefined && y !== undefined ? ['mousemove', String(x), String(y)] : []);

/**
 * The argv that performs an action on display :0. One xdotool process chains the steps, so an
 * action costs one spawn through the agent.
 */
export function actionArgv(a: DesktopAction): string[] {
  switch (a.type) {
    case 'move':
      return ['xdotool', ...moveTo(a.x, a.y)];
    case 'click':
      return ['xdotool', ...moveTo(a.x, a.y), 'click', '--repeat', String(a.count ?? 1), BUTTONS[a.button ?? 'left']];
    case 'press':
      return ['xdotool', 'mousedown', BUTTONS[a.button ?? 'left']];
    case 'release':
      return ['xdotool', 'mouseup', BUTTONS[a.button ?? 'left']];
    case 'drag':
      return ['xdotool', ...moveTo(...a.from), 'mousedown', '1', ...moveTo(...a.to), 'mouseup', '1'];
    case 'scroll':
      return ['xdotool', ...moveTo(a.x, a.y), 'click', '--repeat', String(a.amount ?? 1), WHEEL[a.direction]];
    case 'type':
      return ['xdotool', 'type', '--delay', '8', '--', a.text];
    case 'key':
      return ['xdotool', 'key', '--', a.keys];
    case 'open':
      // Its own session, so the application outlives this command.
      return ['setsid', '-f', 'xdg-open', a.target];
  }
}

/** Where platform/desktop's Xvfb keeps display :0's screen as a file (`-fbdir`), in the sandbox's memory. */
export const FRAMEBUFFER = '/dev/shm/sandpit-display-0/Xvfb_screen0';

/** What the agent's screenshot exits with when the region lies outside the screen (its message on stderr). */
export const REGION_OUTSIDE_EXIT = 64;

/**
 * Writes a PNG of the screen (or a region) to stdout from Xvfb's framebuffer file, compressed by the
 * agent binary itself (packages/agent/screenshot.c): one small static process, no X round trip.
 */
export function framebufferArgv(agentPath: string, r: Region | undefined): string[] {
  return [agentPath, '--screenshot', FRAMEBUFFER, ...(r ? [r.x, r.y, r.width, r.height].map(String) : [])];
}

/**
 * Asks the X server (a display started without a framebuffer file, such as one E2B's Desktop SDK
 * starts itself). Writes a PNG of the screen (or a region) to stdout: scrot opens /dev/stdout, the pipe the agent gave
 * the process, which is the user's own (one process; a shell and `| cat` around it cost ~230 ms more
 * under gVisor).
 */
export function screenshotArgv(r: Region | undefined): string[] {
  return ['scrot', '-o', '-z', '-q', '10', ...regionArgs(r), '/dev/stdout'];
}

/**
 * The same for an agent from before pipes were given to the user (a sandbox restored from an older
 * capture or snapshot): there `user` cannot reopen the agent's pipe, so scrot writes to one of its own.
 */
export function screenshotPipedArgv(r: Region | undefined): string[] {
  return ['/bin/bash', '-c', 'set -o pipefail; scrot -o -z -q 10 "$@" /dev/stdout | cat', 'bash', ...regionArgs(r)];
}

function regionArgs(r: Region | undefined): string[] {
  return r ? ['-a', `${r.x},${r.y},${r.width},${r.height}`] : [];
}

/** The region a screenshot query names: undefined for the whole screen, null when only some of its four values are given. */
export function queryRegion(q: ScreenshotQuery): Region | undefined | null {
  const set = [q.x, q.y, q.width, q.height].filter((v) => v !== undefined).length;
  if (set === 0) return undefined;
  if (set !== 4) return null;
  const r = { x: Number(q.x), y: Number(q.y), width: Number(q.width), height: Number(q.height) };
  return r.width > 0 && r.height > 0 ? r : null;
}

/** `x:640 y:400 screen:0 window:123` -> the point. */
export function parseMouseLocation(out: string): { x: number; y: number } | undefined {
  const m = /x:(-?\d+)\s+y:(-?\d+)/.exec(out);
  return m ? { x: Number(m[1]), y: Number(m[2]) } : undefined;
}

/** `1280 800` -> the size. */
export function parseGeometry(out: string): { width: number; height: number } | undefined {
  const m = /^(\d+)\s+(\d+)/.exec(out.trim());
  return m ? { width: Number(m[1]), height: Number(m[2]) } : undefined;
}
