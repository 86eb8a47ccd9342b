/** Closes the connections one part of the platform holds to a sandbox; answers how many it closed. */
export type ConnectionCloser = (sandboxId: string) => number;

/**
 * TCP connections the platform itself holds to sandboxes (the preview gateway's upstream sockets).
 * gVisor cannot checkpoint a connection on the sandbox's NIC, so a capture closes these first,
 * from the host side: the side that closes first keeps the TIME_WAIT, so the sandbox does not.
 */
export class PlatformConnections {
  readonly #closers: ConnectionCloser[] = [];

  register(closer: ConnectionCloser): void {
    this.#closers.push(closer);
  }

  close(sandboxId: string): number {
    let closed = 0;
    for (const c of this.#closers) closed += c(sandboxId);
    return closed;
  }
}
