import { badRequest, conflict } from '../../errors.ts';
import type { CursorPosition, DesktopAction, LiveView, LiveViewBody, ScreenSize, ScreenshotQuery } from '../../schemas/desktop.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';
import type { Principal } from '../access/principal.ts';
import type { ExecService } from '../data-plane/exec.ts';
import type { PreviewPortService } from '../networking/preview-ports.ts';
import type { SandboxService } from '../sandboxes/sandboxes.ts';
import { actionArgv, framebufferArgv, parseGeometry, parseMouseLocation, queryRegion, REGION_OUTSIDE_EXIT, screenshotArgv, screenshotPipedArgv } from './desktop-commands.ts';

/** Where platform/desktop's start command serves noVNC: interactive, and a view-only VNC endpoint. */
export const LIVE_VIEW_PORT = 6090;
export const VIEW_ONLY_PORT = 6091;
const DEFAULT_VIEW_TTL_S = 900;
const ACTION_TIMEOUT_S = 60;
const DISPLAY_ENV = { DISPLAY: ':0' };

const NO_DESKTOP = 'this sandbox has no desktop on display :0 (start it from platform/desktop)';

/** The last line a command wrote to stderr, cut to a length fit for an error message. */
function lastLine(err: Buffer): string | undefined {
  return err.toString('utf8').trim().split('\n').at(-1)?.slice(0, 300) || undefined;
}

/**
 * A sandbox's desktop (display :0 of platform/desktop): screenshots and input run as commands
 * through the agent (a screenshot from Xvfb's framebuffer file, else scrot; xdotool), one process
 * per call; the live view is noVNC on a private preview port, opened by a short-lived view token.
 */
export class DesktopService {
  readonly #sandboxes: SandboxService;
  readonly #exec: ExecService;
  readonly #previews: PreviewPortService;
  readonly #now: () => number;

  constructor(deps: { sandboxes: SandboxService; exec: ExecService; previews: PreviewPortService; now: () => number }) {
    this.#sandboxes = deps.sandboxes;
    this.#exec = deps.exec;
    this.#previews = deps.previews;
    this.#now = deps.now;
  }

  /** Runs argv on the desktop: its exit code (127 when it could not start) and its output. */
  async #spawn(rec: SandboxRecord, argv: string[]): Promise<{ code: number; out: Buffer; err: Buffer }> {
    const { proc } = await this.#exec.open(rec, { command: argv[0]!, args: argv.slice(1), env: DISPLAY_ENV, timeout_s: ACTION_TIMEOUT_S });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    proc.on('stdout', (c: Buffer) => out.push(c));
    proc.on('stderr', (c: Buffer) => err.push(c));
    const code = await new Promise<number>((resolve) => {
      proc.once('exit', (info: { exitCode: number }) => resolve(info.exitCode));
      proc.once('error', () => resolve(127));
    });
    return { code, out: Buffer.concat(out), err: Buffer.concat(err) };
  }

  /**
   * Runs argv on the desktop; its stdout, or a conflict naming what failed. `orElse` runs instead when
   * argv ran and failed (an exit other than 0 and 127, which says there is no desktop).
   */
  async #run(rec: SandboxRecord, argv: string[], orElse?: string[]): Promise<Buffer> {
    const { code, out, err } = await this.#spawn(rec, argv);
    if (code === 127) throw conflict(NO_DESKTOP);
    if (code !== 0 && orElse) return this.#run(rec, orElse);
    if (code !== 0) {
      const why = lastLine(err);
      throw conflict(`${argv[0]} failed (exit ${code})${why ? `: ${why}` : ''}`);
    }
    return out;
  }

  async screenshot(p: Principal, id: string, q: ScreenshotQuery): Promise<Buffer> {
    const region = queryRegion(q);
    if (region === null) throw badRequest('a region needs all of x, y, width and height, with width and height above 0');
    const rec = await this.#sandboxes.get(p, id);
    const shot = await this.#spawn(rec, framebufferArgv(this.#exec.agentPath, region));
    if (shot.code === 0 && shot.out.length > 0) return shot.out;
    if (shot.code === REGION_OUTSIDE_EXIT) throw badRequest(lastLine(shot.err) ?? 'the region lies outside the screen');
    // No framebuffer file (a display started without one): ask the X server. A failed scrot may be an
    // older agent's pipe, which the user cannot reopen: then the piped form.
    const png = await this.#run(rec, screenshotArgv(region), screenshotPipedArgv(region));
    if (png.length === 0) throw conflict(NO_DESKTOP);
    return png;
  }

  async act(p: Principal, id: string, a: DesktopAction): Promise<void> {
    if ((a.type === 'click' || a.type === 'scroll') && (a.x === undefined) !== (a.y === undefined)) throw badRequest('give both x and y, or neither');
    await this.#run(await this.#sandboxes.get(p, id), actionArgv(a));
  }

  async cursor(p: Principal, id: string): Promise<CursorPosition> {
    const out = (await this.#run(await this.#sandboxes.get(p, id), ['xdotool', 'getmouselocation'])).toString('utf8');
    const at = parseMouseLocation(out);
    if (!at) throw conflict(NO_DESKTOP);
    return at;
  }

  async screen(p: Principal, id: string): Promise<ScreenSize> {
    const out = (await this.#run(await this.#sandboxes.get(p, id), ['xdotool', 'getdisplaygeometry'])).toString('utf8');
    const size = parseGeometry(out);
    if (!size) throw conflict(NO_DESKTOP);
    return size;
  }

  /** Publishes the noVNC port as private (never public) and issues a token that opens only it. */
  async liveView(p: Principal, id: string, body: LiveViewBody): Promise<LiveView> {
    const viewOnly = body.view_only ?? false;
    const port = viewOnly ? VIEW_ONLY_PORT : LIVE_VIEW_PORT;
    const published = await this.#previews.publish(p, id, { port, access: 'private' }, this.#now());
    const rec = await this.#sandboxes.get(p, id);
    const expiresAt = this.#now() + (body.ttl_s ?? DEFAULT_VIEW_TTL_S) * 1000;
    const token = this.#previews.viewToken(rec.id, port, expiresAt);
    const url = new URL('/vnc.html', published.url);
    url.searchParams.set('autoconnect', 'true');
    url.searchParams.set('resize', 'scale');
    if (viewOnly) url.searchParams.set('view_only', 'true');
    url.searchParams.set('preview_token', token);
    url.searchParams.set('path', `websockify?preview_token=${token}`);
    return { url: url.toString(), port, view_token: token, view_only: viewOnly, expires_at: new Date(expiresAt).toISOString() };
  }
}
