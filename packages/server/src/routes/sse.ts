import type { FastifyReply } from 'fastify';

export const KEEPALIVE_MS = 15_000;

/** Takes over the response as a text/event-stream; returns a sender and an abort signal for a gone client. */
export function openEventStream(reply: FastifyReply) {
  reply.hijack();
  const res = reply.raw;
  // Headers hooks already set on the reply (CORS, rate limit) would be lost once it is hijacked.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  return {
    signal: gone.signal,
    send(event: unknown) {
      if (!res.writableEnded) res.write(`data: ${JSON.stringify(event)}\n\n`);
    },
    end() {
      clearInterval(keepalive);
      if (!res.writableEnded) res.end();
    },
  };
}
