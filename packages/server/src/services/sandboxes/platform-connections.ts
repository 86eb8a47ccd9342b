/** Closes the connections one part of the platform holds to a sandbox; answers how many it closed. */
export type ConnectionCloser = (sandboxId: string) => number;

/**
 * TCP connections the platform itself holds to sandboxes (the preview gateway's upstream sockets, the
 * egress proxy's sockets of the sandbox's outbound connections). A capture cuts the sandbox's side of
 * every connection, as a VM's pause does; these are closed from the host side first, so the clients
 * at their far ends see the connection end at once instead of waiting on a peer that is gone.
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
