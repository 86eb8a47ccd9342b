// Runs inside the test "internet" namespace: HTTP on 80, HTTPS on 443 and DNS on 53 for every
// address of the namespace. Each HTTP(S) answer echoes what arrived, so a test can see exactly
// which credential reached the upstream.
import { createSocket } from 'node:dgram';
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';

const cfg = JSON.parse(process.argv[2]!) as { key: string; cert: string; names: Record<string, string> };

function echo(req: IncomingMessage, res: ServerResponse) {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, url: req.url, host: req.headers.host, headers: req.headers, local: req.socket.localAddress, body }));
  });
}

const http = createHttp(echo);
const https = createHttps({ key: cfg.key, cert: cfg.cert }, echo);
// A WebSocket-style upgrade that echoes the headers back, then echoes bytes.
for (const srv of [http, https]) {
  srv.on('upgrade', (req, sock) => {
    sock.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: echo\r\nconnection: upgrade\r\nx-seen-authorization: ${req.headers.authorization ?? ''}\r\n\r\n`);
    sock.pipe(sock);
  });
}
// A slow endpoint whose connection stays open, for "PATCH cuts existing connections".
http.on('request', () => undefined);

const dns = createSocket('udp4');
dns.on('message', (msg, rinfo) => {
  let pos = 12;
  const labels: string[] = [];
  while (msg[pos]) {
    labels.push(msg.toString('latin1', pos + 1, pos + 1 + msg[pos]!));
    pos += 1 + msg[pos]!;
  }
  const qend = pos + 5;
  const name = labels.join('.').toLowerCase();
  const type = msg.readUInt16BE(pos + 1);
  const ip = cfg.names[name];
  const head = Buffer.from(msg.subarray(0, qend));
  head.writeUInt16BE(0x8180 | (ip ? 0 : 3), 2);
  head.writeUInt16BE(ip && type === 1 ? 1 : 0, 6);
  head.writeUInt16BE(0, 8);
  head.writeUInt16BE(0, 10);
  if (!ip || type !== 1) return dns.send(head, rinfo.port, rinfo.address);
  const ans = Buffer.alloc(16);
  ans.writeUInt16BE(0xc00c, 0);
  ans.writeUInt16BE(1, 2);
  ans.writeUInt16BE(1, 4);
  ans.writeUInt32BE(30, 6);
  ans.writeUInt16BE(4, 10);
  ip.split('.').forEach((o, i) => (ans[12 + i] = Number(o)));
  dns.send(Buffer.concat([head, ans]), rinfo.port, rinfo.address);
});

let up = 0;
const ready = () => {
  if (++up === 3) console.log('internet ready');
};
http.listen(80, '0.0.0.0', ready);
https.listen(443, '0.0.0.0', ready);
dns.bind(53, '0.0.0.0', ready);
