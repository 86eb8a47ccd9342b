import type { FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { errors } from '../schemas/common.ts';
import { FileEntry, FileList, MkdirBody, PathQuery, RemoveBody, RenameBody, WatchEvent, WatchQuery } from '../schemas/files.ts';
import type { Services } from './context.ts';
import { dataPlaneHeaders as headers, dataPlaneHook, dataPlaneSandbox as target } from './data-plane-auth.ts';
import { openEventStream } from './sse.ts';

/** Uploads are streamed to the sandbox, never buffered; the sandbox's disk quota is the real limit. */
const UPLOAD_LIMIT = 2 ** 50;
const ERRORS_DOC =
  'Errors: 400 bad_request (empty path or NUL byte; a directory where a file is expected or the reverse), 401, 403 forbidden (permission denied for `user`), ' +
  '404 not_found (no such file or directory), 409 conflict (exists, or a non-empty directory), 503 (agent unreachable).';
const WATCH_DOC =
  'text/event-stream: each `data: ` line is one JSON change event; when the watched directory itself is removed or moved a final event with finished: true ends the stream; a `: keepalive` comment every 15 s';
const tags = ['files'];
const security = [{ AccessToken: [] }];

/** Data-plane files API; all paths are resolved inside the sandbox as `user`. */
export async function fileRoutes(app: FastifyInstance, s: Services) {
  const onRequest = dataPlaneHook(s);

  app.get<{ Querystring: PathQuery }>(
    '/files',
    {
      onRequest,
      schema: {
        summary: 'Download a file (streamed, application/octet-stream, with Content-Length)',
        description: ERRORS_DOC,
        tags,
        security,
        headers,
        querystring: PathQuery,
        response: { 200: { description: 'The file content', content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } } }, ...errors(400, 401, 403, 404, 503) },
      },
    },
    async (req, reply) => {
      const { size, stream } = await s.files.download(target(req), req.query.path);
      return reply.type('application/octet-stream').header('content-length', size).send(stream);
    },
  );

  app.get<{ Querystring: PathQuery }>(
    '/files/list',
    {
      onRequest,
      schema: { summary: 'List a directory', description: ERRORS_DOC, tags, security, headers, querystring: PathQuery, response: { 200: FileList, ...errors(400, 401, 403, 404, 503) } },
    },
    async (req) => ({ entries: await s.files.list(target(req), req.query.path) }),
  );

  app.get<{ Querystring: PathQuery }>(
    '/files/stat',
    {
      onRequest,
      schema: {
        summary: 'Information about a file or directory (symlinks not followed)',
        description: ERRORS_DOC,
        tags,
        security,
        headers,
        querystring: PathQuery,
        response: { 200: Type.Ref('FileEntry'), ...errors(400, 401, 403, 404, 503) },
      },
    },
    async (req) => s.files.stat(target(req), req.query.path),
  );

  app.post<{ Body: MkdirBody }>(
    '/files/mkdir',
    {
      onRequest,
      schema: {
        summary: 'Create a directory (with parents by default)',
        description: ERRORS_DOC,
        tags,
        security,
        headers,
        body: MkdirBody,
        response: { 200: Type.Ref('FileEntry'), ...errors(400, 401, 403, 404, 409, 503, 507) },
      },
    },
    async (req) => {
      const body = req.body;
      return s.files.mkdir(target(req), body.path, body.parents ?? true);
    },
  );

  app.post<{ Body: RemoveBody }>(
    '/files/remove',
    {
      onRequest,
      schema: {
        summary: 'Remove a file, or a directory (recursive for a non-empty one)',
        description: ERRORS_DOC,
        tags,
        security,
        headers,
        body: RemoveBody,
        response: { 204: Type.Null({ description: 'Removed' }), ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req, reply) => {
      const body = req.body;
      await s.files.remove(target(req), body.path, body.recursive ?? false);
      return reply.code(204).send();
    },
  );

  app.post<{ Body: RenameBody }>(
    '/files/rename',
    {
      onRequest,
      schema: {
        summary: 'Rename or move a file or directory (atomic, same filesystem)',
        description: ERRORS_DOC,
        tags,
        security,
        headers,
        body: RenameBody,
        response: { 200: Type.Ref('FileEntry'), ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req) => {
      const body = req.body;
      return s.files.rename(target(req), body.from, body.to, body.overwrite ?? true);
    },
  );

  app.get<{ Querystring: WatchQuery }>(
    '/files/watch',
    {
      onRequest,
      schema: {
        summary: 'Watch a directory for changes (server-sent events)',
        description: `${WATCH_DOC}. ${ERRORS_DOC}`,
        tags,
        security,
        headers,
        querystring: WatchQuery,
        response: { 200: { description: WATCH_DOC, content: { 'text/event-stream': { schema: WatchEvent } } }, ...errors(400, 401, 403, 404, 503) },
      },
    },
    async (req, reply) => {
      const watch = await s.files.openWatch(target(req), req.query.path, req.query.recursive === 'true');
      const sse = openEventStream(reply);
      try {
        await s.files.streamWatch(watch, sse.send, sse.signal);
      } finally {
        sse.end();
      }
    },
  );

  // The upload route gets a context of its own where every body is passed through as a stream.
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    raw.put<{ Querystring: PathQuery; Body: Readable | undefined }>(
      '/files',
      {
        onRequest,
        bodyLimit: UPLOAD_LIMIT,
        schema: {
          summary: 'Upload a file: the raw request body becomes the file content (streamed)',
          description:
            'Any Content-Type; the body is stored as is. Missing parent directories are created; an existing file is replaced atomically and keeps its permissions. ' +
            'The data goes to a temporary file that gets its name only when complete, so a failed upload leaves nothing behind. ' +
            `Errors: 507 insufficient_storage when the sandbox disk quota is exhausted (nothing is written; the connection is closed if the body was not fully read). ${ERRORS_DOC}`,
          tags,
          security,
          headers,
          querystring: PathQuery,
          response: { 200: Type.Ref('FileEntry'), ...errors(400, 401, 403, 404, 409, 503, 507) },
        },
      },
      async (req, reply) => {
        const body = req.body ?? req.raw;
        try {
          return await s.files.upload(target(req), req.query.path, body);
        } catch (err) {
          // An answer before the body was read (the service drops at most 256 MiB of it): close.
          if (!req.raw.complete) reply.header('connection', 'close');
          throw err;
        }
      },
    );
  });
}

export const fileSchemas = [FileEntry];
