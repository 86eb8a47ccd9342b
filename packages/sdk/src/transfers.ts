import { SandpitError } from './errors.ts';

/**
 * Whole-file transfers may be large: their deadline is 10 minutes unless `timeoutMs` says otherwise
 * (a streamed read's deadline covers only the wait for the first byte).
 */
export const TRANSFER_TIMEOUT_MS = 600_000;

/** What a read needs of its options (files' and volumes' `ReadOptions`). */
interface Read {
  format?: 'bytes' | 'text' | 'stream';
  timeoutMs?: number;
  signal?: AbortSignal;
}

export const pathQuery = (path: string) => new URLSearchParams({ path });

/** What an upload sends: the data itself, an ArrayBuffer seen as bytes. */
export const uploadBody = <T>(data: T | ArrayBuffer): T | Uint8Array => (data instanceof ArrayBuffer ? new Uint8Array(data) : data);

/** The deadline of a read: the caller's, else none for a stream and TRANSFER_TIMEOUT_MS for a whole file. */
export const readTimeout = (opts: Read) => opts.timeoutMs ?? ((opts.format ?? 'bytes') === 'stream' ? undefined : TRANSFER_TIMEOUT_MS);

/** A started download in the format asked: the stream itself, or all of it, read within the read's deadline. */
export async function downloadAs(
  { body, controller }: { body: ReadableStream<Uint8Array>; controller: AbortController },
  opts: Read,
  what: string,
): Promise<Uint8Array | string | ReadableStream<Uint8Array>> {
  const format = opts.format ?? 'bytes';
  if (format === 'stream') return body;
  const timer = setTimeout(() => controller.abort(), readTimeout(opts));
  try {
    const bytes = new Uint8Array(await new Response(body).arrayBuffer());
    return format === 'text' ? new TextDecoder().decode(bytes) : bytes;
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw new SandpitError(`${what}: the download broke: ${(err as Error).message}`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}
