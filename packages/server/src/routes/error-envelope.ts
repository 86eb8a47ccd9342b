import { STATUS_CODES as HTTP_REASONS } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** Contract codes for the 4xx statuses the framework itself may answer. */
const CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  410: 'gone',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'header_fields_too_large',
  503: 'unavailable',
};

/** The contract code of a client-error status; an unnamed 4xx is still a bad request, never a 500. */
export function codeForStatus(status: number): string {
  return CODES[status] ?? 'bad_request';
}

export function envelope(code: string, message: string) {
  return { error: { code, message } };
}

/** Fastify `frameworkErrors`: the router's own failures (bad percent-encoding, over-long parameter). */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : err.statusCode && err.statusCode < 500 ? err.statusCode : 400;
  const message = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path parameter is too long' : err.code === 'FST_ERR_BAD_URL' ? 'the path is not validly percent-encoded' : err.message;
  void reply.code(status).send(envelope(codeForStatus(status), message));
}

/** Fastify `clientErrorHandler`: requests Node's HTTP parser rejects before any route runs. */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'the request did not arrive in time']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'the request headers are too large']
        : [400, 'the request is not valid HTTP'];
  const body = JSON.stringify(envelope(codeForStatus(status), message));
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${HTTP_REASONS[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}
