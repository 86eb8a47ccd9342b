import type { TLSSocket } from 'node:tls';
import { type Static, Type } from 'typebox';
import { badRequest, notFound } from '../errors.ts';
import type { FastifyReply } from 'fastify';
import { decodeSelection, sendTree } from '../runtime/tree-transfer.ts';

/** How long the digest of a part sent is kept for its receiver to ask for it. */
const KEEP_MS = 10 * 60_000;

/** Digests of parts this node sent, by the transfer id their receiver chose. */
const sent = new Map<string, { digest: Promise<string>; at: number }>();

/**
 * Sends directory `root` as one part of a move or a snapshot shipping (a tar stream). On a plain
 * channel it remembers the digest of the bytes sent under `transfer` for the receiver to check its copy
 * against (partDigest); over TLS the channel authenticates every record, and no digest is taken.
 * With `resume` (a POST: the receiver's copy was cut), only the files it still lacks.
 * A tar that fails cuts the answer, so the receiver's fetch fails too.
 */
export async function servePart(reply: FastifyReply, scratch: string, root: string, transfer: string | undefined, resume?: ResumeBody): Promise<void> {
  let select: boolean[] | undefined;
  try {
    select = resume && decodeSelection(resume.select, resume.files);
  } catch (err) {
    throw badRequest((err as Error).message);
  }
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'application/x-tar' });
  const digest = (res.socket as TLSSocket | null)?.encrypted !== true;
  const sending = sendTree(root, res, { digest, scratch, select });
  if (transfer !== undefined && digest) {
    const now = Date.now();
    for (const [k, v] of sent) if (now - v.at > KEEP_MS) sent.delete(k);
    sent.set(transfer, { digest: sending as Promise<string>, at: now });
  }
  try {
    await sending;
    res.end();
  } catch {
    res.destroy();
  }
}

/** The digest of the part sent under `transfer` (once it is sent whole); undefined for an unknown transfer or a failed send. */
async function partDigest(transfer: string): Promise<string | undefined> {
  const s = sent.get(transfer);
  if (!s) return undefined;
  sent.delete(transfer);
  return s.digest.catch(() => undefined);
}

/** A resumed part's request: which of the part's manifest files (in its order) to send, as a bitmap. */
export const ResumeBody = Type.Object({ select: Type.String({ maxLength: 16 * 1024 * 1024 }), files: Type.Integer({ minimum: 0 }) });
export type ResumeBody = Static<typeof ResumeBody>;

/** The query of a part and of its digest: the receiver's id for this transfer. */
export const Transfer = Type.Object({ transfer: Type.Optional(Type.String({ pattern: '^[0-9a-f-]{36}$' })) });

export async function digestOrNotFound(transfer: string): Promise<string> {
  const d = await partDigest(transfer);
  if (d === undefined) throw notFound('no part was sent whole under that transfer id');
  return d;
}
