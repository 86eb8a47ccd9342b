/**
 * Wire format of the in-sandbox agent (packages/agent/PROTOCOL.md, constants from proto.h):
 * frame = u32 LE length of the rest, u8 type, u32 LE id, payload; structured payloads are
 * TLV entries of u16 LE tag, u32 LE length, value.
 */

/** The version this server speaks; an agent announcing another (a sandbox restored from an older image) is refused on connect. */
export const PROTOCOL_VERSION = 1;
export const HEADER_BYTES = 9;
/** Largest payload the agent accepts in one frame. */
export const MAX_PAYLOAD = 16 * 1024 * 1024;

export const Msg = {
  spawn: 0x01,
  stdin: 0x02,
  stdinClose: 0x03,
  signal: 0x04,
  resize: 0x05,
  setEnv: 0x06,
  ping: 0x07,
  file: 0x08,
  list: 0x09,
  attach: 0x0a,
  dial: 0x0b,
  read: 0x0c,
  descriptors: 0x0d,
  fileNow: 0x0e,
  mount: 0x0f,
  hello: 0x80,
  spawned: 0x81,
  stdout: 0x82,
  stderr: 0x83,
  exit: 0x84,
  error: 0x85,
  ok: 0x86,
  pong: 0x87,
  stdinDropped: 0x88,
  procs: 0x89,
} as const;

export const SpawnTag = { argv: 1, env: 2, cwd: 3, user: 4, timeoutMs: 5, pty: 6, flags: 7, name: 8 } as const;
export const SpawnFlag = { background: 1, stdinClosed: 2, stdinBlocking: 4 } as const;
export const FileTag = { op: 1, path: 2, path2: 3, flags: 4, user: 5, data: 6 } as const;
export const FileFlag = { parents: 1, recursive: 2, noOverwrite: 4, direct: 8 } as const;
export const FileOp = { stat: 1, list: 2, mkdir: 3, remove: 4, rename: 5, read: 6, write: 7, watch: 8 } as const;
/** Top-level tags of the records a file helper writes to its stdout (and FILE_NOW answers with). */
export const RecordTag = { entry: 1, event: 2, data: 3 } as const;
export const EntryTag = { name: 1, type: 2, size: 3, mode: 4, mtimeMs: 5, uid: 6, gid: 7, target: 8 } as const;
export const EntryType = ['file', 'dir', 'symlink', 'other'] as const;
export const EventTag = { kind: 1, name: 2, isDir: 3 } as const;
export const EventKind = [undefined, 'create', 'write', 'remove', 'rename_from', 'rename_to', 'chmod'] as const;
export const AttachTag = { pid: 1 } as const;
export const ReadTag = { path: 1 } as const;
export const MountTag = { source: 1, target: 2, flags: 3 } as const;
export const MountFlag = { readOnly: 1 } as const;
export const ProcsTag = { entry: 1 } as const;
export const ProcTag = { pid: 1, name: 2, flags: 3, exitCode: 4, exitSignal: 5 } as const;
export const ProcFlag = { pty: 1, attached: 2, exited: 4 } as const;
export const SetEnvTag = { set: 1, unset: 2, flags: 3 } as const;
export const SetEnvFlag = { replace: 1 } as const;
export const HelloTag = { version: 1 } as const;
export const SpawnedTag = { pid: 1, size: 2 } as const;
export const ExitTag = { code: 1, signal: 2, timedOut: 3 } as const;
export const ErrorTag = { errno: 1, message: 2 } as const;

/** The 9 header bytes of a frame whose payload is written separately. */
export function frameHeader(type: number, id: number, payloadLength: number): Buffer {
  const h = Buffer.allocUnsafe(HEADER_BYTES);
  h.writeUInt32LE(5 + payloadLength, 0);
  h.writeUInt8(type, 4);
  h.writeUInt32LE(id, 5);
  return h;
}

export function encodeFrame(type: number, id: number, payload?: Buffer): Buffer {
  const len = payload?.length ?? 0;
  const frame = Buffer.allocUnsafe(HEADER_BYTES + len);
  frame.writeUInt32LE(5 + len, 0);
  frame.writeUInt8(type, 4);
  frame.writeUInt32LE(id, 5);
  payload?.copy(frame, HEADER_BYTES);
  return frame;
}

export class TlvWriter {
  #parts: Buffer[] = [];

  bytes(tag: number, value: Buffer): this {
    const head = Buffer.allocUnsafe(6);
    head.writeUInt16LE(tag, 0);
    head.writeUInt32LE(value.length, 2);
    this.#parts.push(head, value);
    return this;
  }

  string(tag: number, value: string): this {
    return this.bytes(tag, Buffer.from(value, 'utf8'));
  }

  u32(tag: number, value: number): this {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(value, 0);
    return this.bytes(tag, b);
  }

  u16Pair(tag: number, a: number, b: number): this {
    return this.bytes(tag, u16Pair(a, b));
  }

  finish(): Buffer {
    return Buffer.concat(this.#parts);
  }
}

export function u16Pair(a: number, b: number): Buffer {
  const buf = Buffer.allocUnsafe(4);
  buf.writeUInt16LE(a, 0);
  buf.writeUInt16LE(b, 2);
  return buf;
}

/** First value of each tag (the agent never repeats tags in its replies). Throws on malformed input. */
export function decodeTlv(payload: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  let off = 0;
  while (off < payload.length) {
    if (payload.length - off < 6) throw new Error('malformed TLV');
    const tag = payload.readUInt16LE(off);
    const len = payload.readUInt32LE(off + 2);
    if (payload.length - off - 6 < len) throw new Error('malformed TLV');
    if (!out.has(tag)) out.set(tag, payload.subarray(off + 6, off + 6 + len));
    off += 6 + len;
  }
  return out;
}

/** Every top-level entry in order (tags may repeat). Throws on malformed input. */
export function decodeTlvList(payload: Buffer): { tag: number; value: Buffer }[] {
  const out: { tag: number; value: Buffer }[] = [];
  const rest = splitTlv(payload, out);
  if (rest.length) throw new Error('malformed TLV');
  return out;
}

/** Splits off the complete entries at the front; returns the incomplete remainder. */
export function splitTlv(buf: Buffer, into: { tag: number; value: Buffer }[]): Buffer {
  let off = 0;
  while (buf.length - off >= 6) {
    const len = buf.readUInt32LE(off + 2);
    if (buf.length - off - 6 < len) break;
    into.push({ tag: buf.readUInt16LE(off), value: buf.subarray(off + 6, off + 6 + len) });
    off += 6 + len;
  }
  return buf.subarray(off);
}

/** Frames whose payload is plain bytes of a stream: delivering it in pieces means the same. */
const STREAMED: ReadonlySet<number> = new Set([Msg.stdout, Msg.stderr]);

/**
 * Reassembles frames from socket chunks. Chunks are kept in a list until a frame is
 * complete, so a large frame costs one copy instead of one per chunk; STDOUT and STDERR
 * payloads (up to 1 MiB per frame from a file read) are passed on piece by piece as
 * they arrive, with no copy at all.
 */
export class FrameDecoder {
  #chunks: Buffer[] = [];
  #buffered = 0;
  #need = -1; // length of the frame in progress (after its length field), -1: unknown yet
  /** A streamed frame in progress: its type, id and the payload bytes still to come. */
  #stream = { type: 0, id: 0, left: 0 };

  push(chunk: Buffer, onFrame: (type: number, id: number, payload: Buffer) => void): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    for (;;) {
      const st = this.#stream;
      if (st.left > 0) {
        if (this.#buffered === 0) return;
        const piece = this.#take(Math.min(st.left, this.#chunks[0]!.length));
        st.left -= piece.length;
        onFrame(st.type, st.id, piece);
        continue;
      }
      if (this.#need < 0) {
        if (this.#buffered < 4) return;
        this.#need = this.#take(4).readUInt32LE(0);
        if (this.#need < 5 || this.#need > MAX_PAYLOAD + 5) throw new Error(`malformed frame length ${this.#need}`);
      }
      if (this.#buffered >= 5 && this.#need > 5 && STREAMED.has(this.#peekType())) {
        const head = this.#take(5);
        this.#stream = { type: head.readUInt8(0), id: head.readUInt32LE(1), left: this.#need - 5 };
        this.#need = -1;
        continue;
      }
      if (this.#buffered < this.#need) return;
      const frame = this.#take(this.#need);
      this.#need = -1;
      onFrame(frame.readUInt8(0), frame.readUInt32LE(1), frame.subarray(5));
    }
  }

  #peekType(): number {
    return this.#chunks[0]!.readUInt8(0);
  }

  #take(n: number): Buffer {
    const first = this.#chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let filled = 0;
      while (filled < n) {
        const c = this.#chunks[0]!;
        const k = Math.min(c.length, n - filled);
        c.copy(out, filled, 0, k);
        filled += k;
        if (k === c.length) this.#chunks.shift();
        else this.#chunks[0] = c.subarray(k);
      }
    }
    this.#buffered -= n;
    return out;
  }
}
