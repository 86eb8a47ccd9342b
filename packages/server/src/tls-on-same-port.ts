import type { Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions } from 'node:https';
import type { Socket } from 'node:net';

/** The first byte of a TLS connection: a handshake record. */
const TLS_HANDSHAKE = 0x16;

/**
 * Makes `server` take HTTPS on its own port too: each new connection's first byte says whether it
 * is TLS (a handshake record), and TLS connections go through an HTTPS server with `options` to the
 * same request and upgrade handlers. Answers what ends the TLS connections (the server's own close
 * waits for every connection it accepted, these too).
 */
export function acceptTlsToo(server: HttpServer, options: ServerOptions): { destroyTlsConnections(): void } {
  const secure = createHttpsServer(options);
  const tlsSockets = new Set<Socket>();
  for (const handler of server.listeners('request')) secure.on('request', handler as (...a: unknown[]) => void);
  secure.on('upgrade', (req, socket, head) => server.emit('upgrade', req, socket, head));
  const plain = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    socket.once('readable', () => {
      const first = socket.read(1) as Buffer | null;
      if (first) socket.unshift(first);
      if (first?.[0] === TLS_HANDSHAKE) {
        tlsSockets.add(socket);
        socket.once('close', () => tlsSockets.delete(socket));
        secure.emit('connection', socket);
      } else {
        for (const handler of plain) handler.call(server, socket);
      }
    });
  });
  return {
    destroyTlsConnections() {
      for (const s of tlsSockets) s.destroy();
    },
  };
}
