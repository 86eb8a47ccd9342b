import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest } from '../../errors.ts';
import type { FileMetadataService } from '../../services/data-plane/file-metadata.ts';
import type { FileEntry, FileService } from '../../services/data-plane/files.ts';
import type { FileMetadata } from '../../store/file-metadata.ts';
import type { SandboxService } from '../../services/sandboxes/sandboxes.ts';
import { toE2bError } from '../errors.ts';
import { writtenInfo } from './entry.ts';
import { filesSandbox } from './signed-files.ts';
import { envdSandbox, envdUser, userPath } from './target.ts';

const METADATA_HEADER = 'x-metadata-';

interface FilesQuery {
  path?: string;
  username?: string;
  signature?: string;
  signature_expiration?: string;
}

/** E2B's upload metadata: one `X-Metadata-<key>` header per key (header names arrive lower-cased). */
function metadataOf(headers: FastifyRequest['headers']): FileMetadata | undefined {
  const out: FileMetadata = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(METADATA_HEADER) && name.length > METADATA_HEADER.length) out[name.slice(METADATA_HEADER.length)] = Array.isArray(value) ? value.join(', ') : (value ?? '');
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

const fail = (reply: FastifyReply, err: unknown) => {
  const { status, body } = toE2bError(err);
  return reply.code(status).send(body);
};

/** envd's plain HTTP routes: health, and file download/upload (raw, multipart, octet-stream, gzip). */
export async function envdHttpRoutes(app: FastifyInstance, deps: { sandboxes: SandboxService; files: FileService; fileMetadata: FileMetadataService }) {
  const { sandboxes, files, fileMetadata } = deps;

  app.get('/health', async (req, reply) => {
    try {
      await envdSandbox(sandboxes, req);
      return reply.code(204).send();
    } catch (err) {
      return fail(reply, err);
    }
  });

  app.get('/files', async (req: FastifyRequest<{ Querystring: FilesQuery }>, reply) => {
    try {
      const rec = await filesSandbox(sandboxes, req, 'read');
      const user = envdUser(req, req.query.username);
      const { path, size, stream } = await files.download(rec, userPath(req.query.path, user), user);
      const name = path.split('/').pop() ?? 'file';
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', size)
        .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(name)}`)
        .send(stream);
    } catch (err) {
      return fail(reply, err);
    }
  });

  app.post('/files', async (req: FastifyRequest<{ Querystring: FilesQuery }>, reply) => {
    try {
      const rec = await filesSandbox(sandboxes, req, 'write');
      const user = envdUser(req, req.query.username);
      const metadata = metadataOf(req.headers);
      // Checked before anything is written: a refused write creates no file.
      if (metadata) fileMetadata.check(metadata);
      const type = String(req.headers['content-type'] ?? '');
      const body = req.body as Readable;
      const written: FileEntry[] = [];
      if (type.startsWith('multipart/form-data')) {
        // Whole parts are buffered by the platform's form parser: multipart is the SDK's path for small writes.
        const form = await new Response(Readable.toWeb(body) as ReadableStream, { headers: { 'content-type': type } }).formData();
        for (const [field, value] of form) {
          if (field !== 'file') continue;
          // A text field is a file's content too (a browser form or `FormData.append('file', 'text')`); its name is the query's path.
          if (typeof value === 'string' && !req.query.path) continue;
          const target = userPath(typeof value === 'string' ? req.query.path : (req.query.path ?? value.name), user);
          const content = () => (typeof value === 'string' ? Readable.from([Buffer.from(value)]) : Readable.fromWeb(value.stream() as never));
          written.push(
            await files.upload(rec, target, content(), user).catch(async (err: unknown) => {
              // envd makes any missing directory and gives it to the user; the part is buffered, so it is sent again.
              if (!(err instanceof ApiError && err.status === 403)) throw err;
              await files.makeParentsFor(rec, target, user);
              return files.upload(rec, target, content(), user);
            }),
          );
        }
        if (written.length === 0) throw badRequest('the multipart body has no "file" part');
      } else {
        if (!req.query.path) throw badRequest('path is required for an octet-stream upload');
        const gzip = String(req.headers['content-encoding'] ?? '').toLowerCase() === 'gzip';
        written.push(await files.upload(rec, userPath(req.query.path, user), gzip ? body.pipe(createGunzip()) : body, user));
      }
      // Every file of the upload gets the request's metadata; a write without any clears what an earlier one set.
      for (const e of written) await fileMetadata.written(rec, e.path, metadata);
      return reply.code(200).send(written.map((e) => writtenInfo(e, metadata)));
    } catch (err) {
      if (!(err instanceof ApiError)) req.log.error({ err: String(err) }, 'e2b upload failed');
      return fail(reply, err);
    }
  });
}
