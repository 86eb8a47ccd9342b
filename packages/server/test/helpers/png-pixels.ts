import { inflateSync } from 'node:zlib';

/** A decoded PNG: 8-bit RGB or RGBA rows, top to bottom. */
export interface Pixels {
  width: number;
  height: number;
  channels: 3 | 4;
  data: Buffer;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/**
 * Decodes a non-interlaced 8-bit RGB or RGBA PNG (what scrot and the agent write), undoing each
 * row's filter, so tests can look at what a screenshot shows.
 */
export function pngPixels(png: Uint8Array): Pixels {
  const b = Buffer.from(png);
  let at = 8;
  let width = 0;
  let height = 0;
  let channels: 3 | 4 = 3;
  const idat: Buffer[] = [];
  while (at < b.length) {
    const len = b.readUInt32BE(at);
    const type = b.subarray(at + 4, at + 8).toString('latin1');
    const body = b.subarray(at + 8, at + 8 + len);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8 || (body[9] !== 2 && body[9] !== 6) || body[12] !== 0) throw new Error(`unsupported PNG: depth ${body[8]}, colour type ${body[9]}, interlace ${body[12]}`);
      channels = body[9] === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(body);
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const data = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? data[y * stride + x - channels]! : 0;
      const up = y > 0 ? data[(y - 1) * stride + x]! : 0;
      const c = x >= channels && y > 0 ? data[(y - 1) * stride + x - channels]! : 0;
      const pred = [0, a, up, (a + up) >> 1, paeth(a, up, c)][filter];
      if (pred === undefined) throw new Error(`unknown PNG filter ${filter}`);
      data[y * stride + x] = (row[x]! + pred) & 0xff;
    }
  }
  return { width, height, channels, data };
}

/** The distinct colours of an image, as `r,g,b` strings. */
export function colours(p: Pixels): Set<string> {
  const seen = new Set<string>();
  for (let i = 0; i < p.data.length; i += p.channels) seen.add(`${p.data[i]},${p.data[i + 1]},${p.data[i + 2]}`);
  return seen;
}
