/** How long a first use may wait for a curated template to build (minutes on a fresh, loaded host). */
export const FIRST_USE_MS = 25 * 60_000;

/**
 * Runs `create` (the first use of a template, which builds it) again while it fails by a timeout:
 * a request that waits for headers longer than fetch allows (300 s) gives up, but the build goes on
 * in the server, and the next request waits for the same build.
 */
export async function firstUse<T>(create: () => Promise<T>): Promise<T> {
  const end = Date.now() + FIRST_USE_MS;
  for (;;) {
    try {
      return await create();
    } catch (err) {
      if (Date.now() > end || !timedOut(err)) throw err;
    }
  }
}

function timedOut(err: unknown): boolean {
  for (let e = err as { message?: string; code?: string; cause?: unknown; name?: string } | undefined; e; e = e.cause as typeof e) {
    if (/timeout|timed out/i.test(`${e.name ?? ''} ${e.code ?? ''} ${e.message ?? ''}`)) return true;
  }
  return false;
}
