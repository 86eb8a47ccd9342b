import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONNECT_HTTP_STATUS, ConnectError, toConnectError } from './errors.ts';

/**
 * Connect protocol, JSON codec, over HTTP/1.1 (connectrpc.com/docs/protocol): unary calls are a
 * plain JSON POST; server streams answer 200 with enveloped messages (1 flag byte, 4-byte
 * big-endian length, JSON) and end with an end-of-stream envelope (flag 0x02) that carries the error.
 */
const END_STREAM = 0x02;
/** Largest request message accepted; E2B's biggest is SendInput with a chunk of stdin. */
const MAX_MESSAGE = 16 * 1024 * 1024;

export type Message = Record<string, unknown>;

/**
 * Thrown by a stream handler whose source vanished (the sandbox was deleted): the connection is cut
 * rather than ended cleanly, as envd's would be, so the SDK probes /health and reports the sandbox gone.
 */
export class StreamDropped extends Error {}

export interface StreamContext {
  send(msg: Message): void;
  /** Aborts when the client goes away (reason 'closed') or the Connect deadline passes (reason 'deadline'). */
  signal: AbortSignal;
}

export type UnaryHandler = (req: FastifyRequest, msg: Message) => Promise<Message>;
export type StreamHandler = (req: FastifyRequest, msg: Message, ctx: StreamContext) => Promise<void>;

const isStream = (body: unknown): body is Readable => typeof body === 'object' && body !== null && typeof (body as Readable).pipe === 'function';

/** The raw request body (content types other than JSON reach routes unparsed). */
async function readBody(body: unknown): Promise<Buffer> {
  if (!isStream(body)) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += (c as Buffer).length;
    if (size > MAX_MESSAGE) throw new ConnectError('resource_exhausted', 'request message is too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A unary request message: parsed by Fastify when sent as application/json. */
async function unaryMessage(body: unknown): Promise<Message> {
  if (isStream(body)) return parseJson(await readBody(body));
  if (body === undefined || body === null) return {};
  if (typeof body === 'object' && !Array.isArray(body)) return body as Message;
  throw new ConnectError('invalid_argument', 'the request message is not a JSON object');
}

function parseJson(buf: Buffer): Message {
  if (buf.length === 0) return {};
  try {
    const v = JSON.parse(buf.toString('utf8')) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Message;
  } catch {
    // answered below
  }
  throw new ConnectError('invalid_argument', 'the request message is not a JSON object');
}

export function unary(handler: UnaryHandler) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    try {
      const out = await handler(req, await unaryMessage(req.body));
      reply.code(200).header('content-type', 'application/json').send(JSON.stringify(out));
    } catch (err) {
      const e = toConnectError(err);
      if (e.code === 'internal') req.log.error({ err: String(err) }, 'e2b rpc failed');
      reply
        .code(CONNECT_HTTP_STATUS[e.code])
        .header('content-type', 'application/json')
        .send(JSON.stringify({ code: e.code, message: e.message }));
    }
  };
}

function envelope(flags: number, payload: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(payload));
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

/** Seconds between keep-alive messages the SDK asks for with Keepalive-Ping-Interval. */
function keepaliveSeconds(req: FastifyRequest): number | undefined {
  const raw = Number(req.headers['keepalive-ping-interval']);
  return Number.isFinite(raw) && raw > 0 ? raw : undefined;
}

export function serverStream(handler: StreamHandler, keepalive: Message) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    let msg: Message;
    try {
      const buf = await readBody(req.body);
      if (buf.length < 5 || buf.readUInt32BE(1) !== buf.length - 5) throw new ConnectError('invalid_argument', 'the request is not one enveloped Connect message');
      msg = parseJson(buf.subarray(5));
    } catch (err) {
      const e = toConnectError(err);
      return reply
        .code(200)
        .header('content-type', 'application/connect+json')
        .send(envelope(END_STREAM, { error: { code: e.code, message: e.message } }));
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'application/connect+json' });
    res.flushHeaders();
    const ctl = new AbortController();
    let ended = false;
    res.on('close', () => ctl.abort('closed'));
    const deadlineMs = Number(req.headers['connect-timeout-ms']);
    const deadline = Number.isFinite(deadlineMs) && deadlineMs > 0 ? setTimeout(() => ctl.abort('deadline'), deadlineMs) : undefined;
    const ka = keepaliveSeconds(req);
    const pinger = ka ? setInterval(() => ctx.send(keepalive), ka * 1000) : undefined;
    const ctx: StreamContext = {
      send(m) {
        if (!ended && !res.destroyed) res.write(envelope(0, m));
      },
      signal: ctl.signal,
    };
    let error: ConnectError | undefined;
    try {
      await handler(req, msg, ctx);
      if (ctl.signal.aborted && ctl.signal.reason === 'deadline') error = new ConnectError('deadline_exceeded', 'the request deadline (Connect-Timeout-Ms) passed');
    } catch (err) {
      if (err instanceof StreamDropped) {
        res.destroy();
        return;
      }
      error = toConnectError(err);
      if (error.code === 'internal') req.log.error({ err: String(err) }, 'e2b stream failed');
    } finally {
      clearTimeout(deadline);
      clearInterval(pinger);
    }
    ended = true;
    if (!res.destroyed) res.end(envelope(END_STREAM, error ? { error: { code: error.code, message: error.message } } : {}));
  };
}
