import { ConnectionError, SandpitError, TimeoutError } from './errors.ts';

export interface SseOptions {
  /** A read that brings no byte (not even a keepalive) for this long fails with TimeoutError. */
  idleTimeoutMs: number;
  /** Aborting it closes the connection; done whenever the reader stops, early or not. */
  controller: AbortController;
  /** The caller's own signal: its abort is rethrown as is. */
  signal?: AbortSignal;
  what: string;
}

const DATA = 'data: ';

/**
 * Yields the JSON payload of each `data: ` line of a text/event-stream body. Every other line
 * (`: keepalive` comments, `event:`, blank separators) is ignored, as the contract requires.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, opts: SseOptions): AsyncGenerator<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parse = (line: string) => {
    try {
      return JSON.parse(line.slice(DATA.length)) as unknown;
    } catch {
      throw new SandpitError(`${opts.what}: malformed event ${JSON.stringify(line.slice(0, 200))}`);
    }
  };
  let pending = '';
  try {
    for (;;) {
      const { done, value } = await readWithin(reader, opts);
      pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const lines = pending.split('\n');
      // The last piece is an unfinished line until a newline or the end of the stream arrives.
      pending = done ? '' : (lines.pop() ?? '');
      for (const raw of lines) {
        const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
        if (line.startsWith(DATA)) yield parse(line);
      }
      if (done) return;
    }
  } finally {
    opts.controller.abort();
  }
}

async function readWithin(reader: ReadableStreamDefaultReader<Uint8Array>, opts: SseOptions) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${opts.what}: no data or keepalive for ${opts.idleTimeoutMs} ms`)), opts.idleTimeoutMs);
  });
  try {
    return await Promise.race([reader.read(), idle]);
  } catch (err) {
    if (err instanceof SandpitError) throw err;
    if (opts.signal?.aborted) throw opts.signal.reason;
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new ConnectionError(`${opts.what}: the stream broke: ${(err as Error).message}${cause ? ` (${cause})` : ''}`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}
