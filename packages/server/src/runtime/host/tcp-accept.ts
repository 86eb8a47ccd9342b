import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const CONNECT_TIMEOUT_MS = 250;
const RETRY_GAP_MS = 20;

/**
 * Resolves once `host:port` accepts a connection, or after `ms` (false). The probe is reset, not closed,
 * so it leaves no TIME_WAIT on either side (gVisor cannot save one) and the listener sees it go at once.
 */
export async function acceptsWithin(host: string, port: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = connect({ host, port, timeout: CONNECT_TIMEOUT_MS });
      const done = (accepted: boolean) => {
        if (accepted) sock.resetAndDestroy();
        else sock.destroy();
        resolve(accepted);
      };
      sock.once('connect', () => done(true));
      sock.once('error', () => done(false));
      sock.once('timeout', () => done(false));
    });
    if (ok) return true;
    if (Date.now() + RETRY_GAP_MS >= deadline) return false;
    await sleep(RETRY_GAP_MS);
  }
}
