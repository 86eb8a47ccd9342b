import type { Socket } from 'node:net';

/**
 * The port proxy's sockets to each sandbox (kept-alive HTTP and upgraded WebSockets), so they
 * can be closed from the host side before the sandbox is captured or once it is deleted.
 */
export class PortUpstreams {
  readonly #bySandbox = new Map<string, Set<Socket>>();
  // Sockets closed here on purpose: a request on one was cut by the platform, not refused by the sandbox.
  readonly #cut = new WeakSet<Socket>();

  track(sandboxId: string, socket: Socket): void {
    let set = this.#bySandbox.get(sandboxId);
    if (!set) this.#bySandbox.set(sandboxId, (set = new Set()));
    // A kept-alive socket serves request after request.
    if (set.has(socket)) return;
    set.add(socket);
    socket.once('close', () => {
      set.delete(socket);
      if (set.size === 0 && this.#bySandbox.get(sandboxId) === set) this.#bySandbox.delete(sandboxId);
    });
  }

  close(sandboxId: string): number {
    const set = this.#bySandbox.get(sandboxId);
    if (!set) return 0;
    this.#bySandbox.delete(sandboxId);
    const n = set.size;
    for (const socket of set) {
      this.#cut.add(socket);
      socket.destroy();
    }
    return n;
  }

  /** Whether the socket was closed by close(): its sandbox was captured or deleted. */
  wasCut(socket: Socket | undefined): boolean {
    return socket !== undefined && this.#cut.has(socket);
  }
}
