import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { socketName } from '../host/socket-path.ts';

function tryConnect(path: string): Promise<boolean> {
  const name = socketName(path);
  return new Promise<boolean>((resolve) => {
    const sock = connect(name.name);
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => {
      sock.destroy();
      resolve(false);
    });
  }).finally(() => name.release());
}

/**
 * Resolves once something accepts connections on the unix socket `path`.
 * Retries every millisecond; `alive` is asked now and then so that a process
 * that died early fails fast instead of at the timeout.
 */
export async function waitForSocket(path: string, timeoutMs: number, alive: () => boolean): Promise<void> {
  const start = performance.now();
  let lastCheck = start;
  for (;;) {
    if (await tryConnect(path)) return;
    const now = performance.now();
    if (now - lastCheck > 25) {
      lastCheck = now;
      if (!alive()) throw new Error('the sandbox agent exited before it accepted connections');
    }
    if (now - start > timeoutMs) throw new Error(`the sandbox agent did not listen on ${path} within ${timeoutMs} ms`);
    await sleep(1);
  }
}
