import { badRequest } from '../errors.ts';
import type { Keyset } from '../store/keyset.ts';

export interface PageQuery {
  limit?: string;
  cursor?: string;
}

/** Validates `limit` and `cursor`; `fetch` is asked for one item more than the page, to know if another page follows. */
export async function keysetPage<T extends Keyset>(q: PageQuery, fetch: (after: Keyset | undefined, limit: number) => Promise<T[]>): Promise<{ items: T[]; nextCursor?: string }> {
  const limit = q.limit === undefined ? 100 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badRequest('limit must be an integer from 1 to 1000');
  const items = await fetch(q.cursor === undefined ? undefined : decodeCursor(q.cursor), limit + 1);
  if (items.length <= limit) return { items };
  const page = items.slice(0, limit);
  const last = page[page.length - 1]!;
  return { items: page, nextCursor: Buffer.from(`${last.createdAt}:${last.id}`).toString('base64url') };
}

function decodeCursor(c: string): Keyset {
  const [ts, id] = Buffer.from(c, 'base64url').toString().split(':');
  if (!ts || !id || !/^\d+$/.test(ts)) throw badRequest('invalid cursor');
  return { createdAt: Number(ts), id };
}
