import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { errors } from '../schemas/common.ts';
import { VolumeFileList, VolumeFilePathQuery, VolumeIdParam } from '../schemas/volume.ts';
import { apiKeyHook, principal, type Services } from './context.ts';
import { closesUnreadUpload } from '../services/volumes/volume-files.ts';

/** Bodies are streamed to disk; the volume's quota bounds them, not a request limit. */
const UPLOAD_LIMIT = 2 ** 50;

/** Files of a volume without a sandbox: upload, download, list, delete (streamed, on the host). */
export async function volumeFileRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const read = (req: FastifyRequest) => s.auth.require(principal(req), 'sandboxes:read');
  const write = (req: FastifyRequest) => s.auth.require(principal(req), 'sandboxes:write');
  const tags = ['volumes'];
  type Req = { Params: VolumeIdParam; Querystring: VolumeFilePathQuery };

  app.get<Req>(
    '/volumes/:volume/files',
    {
      onRequest,
      schema: {
        summary: 'Download a file of a volume (streamed, application/octet-stream, with Content-Length)',
        tags,
        params: VolumeIdParam,
        querystring: VolumeFilePathQuery,
        response: { 200: { description: 'The file content', content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } } }, ...errors(400, 401, 403, 404, 503) },
      },
    },
    async (req, reply) => {
      read(req);
      const { stream, size } = await s.volumeFiles.download(principal(req), req.params.volume, req.query.path);
      return reply.type('application/octet-stream').header('content-length', size).send(stream);
    },
  );

  app.get<Req>(
    '/volumes/:volume/files/list',
    {
      onRequest,
      schema: {
        summary: 'List a directory of a volume (`/`: its root)',
        tags,
        params: VolumeIdParam,
        querystring: VolumeFilePathQuery,
        response: { 200: VolumeFileList, ...errors(400, 401, 403, 404, 503) },
      },
    },
    async (req) => {
      read(req);
      return { entries: await s.volumeFiles.list(principal(req), req.params.volume, req.query.path) };
    },
  );

  app.delete<Req>(
    '/volumes/:volume/files',
    {
      onRequest,
      schema: {
        summary: 'Delete a file, symlink or empty directory of a volume (409: a directory that is not empty)',
        tags,
        params: VolumeIdParam,
        querystring: VolumeFilePathQuery,
        response: { 204: Type.Null(), ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req, reply) => {
      write(req);
      await s.volumeFiles.remove(principal(req), req.params.volume, req.query.path);
      reply.code(204);
    },
  );

  // The upload gets a context of its own where every body is passed through as a stream.
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    raw.put<Req & { Body: Readable | undefined }>(
      '/volumes/:volume/files',
      {
        onRequest,
        bodyLimit: UPLOAD_LIMIT,
        schema: {
          summary: 'Upload a file into a volume: the raw body becomes its content (streamed)',
          description:
            'Missing parent directories are made; an existing file is replaced atomically (the data goes to a temporary file renamed when complete). ' +
            'Files and directories made are owned by `user`. 507 insufficient_storage: the volume is full (its size is its quota); nothing is written.',
          tags,
          params: VolumeIdParam,
          querystring: VolumeFilePathQuery,
          response: { 201: Type.Ref('VolumeFileEntry'), ...errors(400, 401, 403, 404, 503, 507) },
        },
      },
      async (req, reply) => {
        write(req);
        const length = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
        try {
          const out = await s.volumeFiles.upload(principal(req), req.params.volume, req.query.path, req.body ?? req.raw, length);
          reply.code(201);
          return out;
        } catch (err) {
          if (closesUnreadUpload(req.raw)) reply.header('connection', 'close');
          throw err;
        }
      },
    );
  });
}
