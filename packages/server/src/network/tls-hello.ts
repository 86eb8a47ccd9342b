/** Reading just enough of a TLS ClientHello to learn the server name the client asked for. */

/** Bytes needed before the first record is complete, or 0 when it is (or the data is not TLS). */
export function helloBytesNeeded(buf: Buffer): number {
  if (buf.length < 5) return 5 - buf.length;
  const need = 5 + buf.readUInt16BE(3);
  return Math.max(0, need - buf.length);
}

export const looksLikeTls = (buf: Buffer) => buf[0] === 0x16 && buf[1] === 0x03;

/** The SNI host name of a ClientHello record; undefined when absent or malformed. */
export function parseSni(buf: Buffer): string | undefined {
  try {
    if (!looksLikeTls(buf) || buf[5] !== 0x01) return undefined;
    const end = Math.min(buf.length, 5 + buf.readUInt16BE(3));
    let pos = 5 + 4 + 2 + 32;
    pos += 1 + buf[pos]!;
    pos += 2 + buf.readUInt16BE(pos);
    pos += 1 + buf[pos]!;
    const extEnd = Math.min(end, pos + 2 + buf.readUInt16BE(pos));
    pos += 2;
    while (pos + 4 <= extEnd) {
      const type = buf.readUInt16BE(pos);
      const len = buf.readUInt16BE(pos + 2);
      pos += 4;
      if (type === 0) {
        // server_name_list: list length, then entries of (type, length, name); type 0 is a host name.
        let p = pos + 2;
        while (p + 3 <= pos + len) {
          const nameLen = buf.readUInt16BE(p + 1);
          if (buf[p] === 0) return buf.toString('latin1', p + 3, p + 3 + nameLen).toLowerCase();
          p += 3 + nameLen;
        }
        return undefined;
      }
      pos += len;
    }
  } catch {
    // A malformed hello is treated as one without a name.
  }
  return undefined;
}

const HTTP_METHOD = /^[A-Z]{3,10} /;
export const looksLikeHttp = (buf: Buffer) => HTTP_METHOD.test(buf.toString('latin1', 0, Math.min(buf.length, 11)));
