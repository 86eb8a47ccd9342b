import type { Socket } from 'node:net';
import { libc } from '../runtime/host/libc.ts';

// Node has no getsockopt; SO_ORIGINAL_DST is how a socket redirected by nat/redirect learns
// where the sandbox meant to connect.
const SOL_IP = 0;
const SO_ORIGINAL_DST = 80;
const getsockopt = libc.func('int getsockopt(int, int, int, _Out_ uint8_t *buf, _Inout_ uint32_t *len)');

/** The IPv4 destination the client dialled before the redirect, or undefined. */
export function originalDst(sock: Socket): { ip: string; port: number } | undefined {
  const fd = (sock as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return undefined;
  const buf = Buffer.alloc(16);
  const len = [16];
  if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, buf, len) !== 0) return undefined;
  // struct sockaddr_in: family (host order), port and address (network order).
  if (buf.readUInt16LE(0) !== 2) return undefined;
  return { ip: `${buf[4]}.${buf[5]}.${buf[6]}.${buf[7]}`, port: buf.readUInt16BE(2) };
}
