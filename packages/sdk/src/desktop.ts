import type { SandpitClient } from './client.ts';
import type { RequestOptions } from './http.ts';
import type { CursorPosition, DesktopAction, LiveView, ScreenSize } from './types.ts';

export type MouseButton = 'left' | 'middle' | 'right';
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The desktop of a platform/desktop sandbox (control plane, API key): screenshots, mouse, keyboard, live view. */
export class Desktop {
  readonly #client: SandpitClient;
  readonly #path: string;

  constructor(client: SandpitClient, sandboxId: string) {
    this.#client = client;
    this.#path = `/sandboxes/${encodeURIComponent(sandboxId)}/desktop`;
  }

  /** A PNG of the screen, or of `region`. */
  async screenshot(opts: RequestOptions & { region?: Region } = {}): Promise<Uint8Array> {
    const { region, ...request } = opts;
    const query = region ? new URLSearchParams({ x: String(region.x), y: String(region.y), width: String(region.width), height: String(region.height) }) : undefined;
    const { body } = await this.#client.http.stream({ method: 'GET', path: `${this.#path}/screenshot`, ...(query ? { query } : {}), ...request });
    return new Uint8Array(await new Response(body).arrayBuffer());
  }

  /** Sends one input action; resolves once it was sent to the display. */
  act(action: DesktopAction, opts: RequestOptions = {}): Promise<void> {
    return this.#client.http.json({ method: 'POST', path: `${this.#path}/actions`, body: action, ...opts });
  }

  moveMouse(x: number, y: number, opts: RequestOptions = {}): Promise<void> {
    return this.act({ type: 'move', x, y }, opts);
  }

  /** Clicks where the pointer is, or at `x`,`y`. */
  click(opts: RequestOptions & { x?: number; y?: number; button?: MouseButton } = {}): Promise<void> {
    const { x, y, button, ...request } = opts;
    return this.act({ type: 'click', x, y, button }, request);
  }

  doubleClick(opts: RequestOptions & { x?: number; y?: number } = {}): Promise<void> {
    const { x, y, ...request } = opts;
    return this.act({ type: 'click', x, y, count: 2 }, request);
  }

  rightClick(opts: RequestOptions & { x?: number; y?: number } = {}): Promise<void> {
    const { x, y, ...request } = opts;
    return this.act({ type: 'click', x, y, button: 'right' }, request);
  }

  drag(from: [number, number], to: [number, number], opts: RequestOptions = {}): Promise<void> {
    return this.act({ type: 'drag', from, to }, opts);
  }

  scroll(direction: 'up' | 'down' | 'left' | 'right', amount = 1, opts: RequestOptions = {}): Promise<void> {
    return this.act({ type: 'scroll', direction, amount }, opts);
  }

  /** Types text as key presses into the focused window. */
  type(text: string, opts: RequestOptions = {}): Promise<void> {
    return this.act({ type: 'type', text }, opts);
  }

  /** Presses a key or chord in X keysym names: `Return`, `ctrl+c`, `ctrl+shift+t`. */
  key(keys: string, opts: RequestOptions = {}): Promise<void> {
    return this.act({ type: 'key', keys }, opts);
  }

  /** Opens a file in the sandbox or a URL with its default application. */
  open(target: string, opts: RequestOptions = {}): Promise<void> {
    return this.act({ type: 'open', target }, opts);
  }

  cursor(opts: RequestOptions = {}): Promise<CursorPosition> {
    return this.#client.http.json({ method: 'GET', path: `${this.#path}/cursor`, ...opts });
  }

  screenSize(opts: RequestOptions = {}): Promise<ScreenSize> {
    return this.#client.http.json({ method: 'GET', path: `${this.#path}/screen`, ...opts });
  }

  /** A noVNC link (private preview port, short-lived view token); `viewOnly` links cannot send input. */
  liveView(opts: RequestOptions & { viewOnly?: boolean; ttlS?: number } = {}): Promise<LiveView> {
    const { viewOnly, ttlS, ...request } = opts;
    return this.#client.http.json({ method: 'POST', path: `${this.#path}/live-view`, body: { view_only: viewOnly ?? false, ...(ttlS ? { ttl_s: ttlS } : {}) }, ...request });
  }
}
