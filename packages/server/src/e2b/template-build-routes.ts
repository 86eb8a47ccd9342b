import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { Value } from 'typebox/value';
import { iso } from '../clock.ts';
import { ApiError, badRequest, forbidden, notFound } from '../errors.ts';
import { ARCHIVE_HASH, CreateTemplateBody } from '../schemas/template.ts';
import type { AuthService } from '../services/access/auth.ts';
import type { BuildRequests } from '../services/templates/build-requests.ts';
import type { TeamTemplates } from '../services/templates/team-templates.ts';
import { checkTag, splitTagged, type TemplateTags } from '../services/templates/template-tags.ts';
import type { TemplateUploads } from '../services/templates/template-uploads.ts';
import type { BuildRecord } from '../store/templates.ts';
import { e2bCaller } from './caller.ts';
import { isE2bTemplateName } from './sandbox-view.ts';
import { type E2bBuildStart, type TranslatedBuild, translateBuild } from './template-steps.ts';

export interface E2bTemplateBuildDeps {
  auth: AuthService;
  templates: TeamTemplates;
  tags: TemplateTags;
  requests: BuildRequests;
  uploads: TemplateUploads;
}

type BuildLogEvent = Awaited<ReturnType<TeamTemplates['buildLog']>>['past'][number];

type TemplateParams = FastifyRequest<{ Params: { templateID: string } }>;
type BuildRequest = FastifyRequest<{ Params: { templateID: string; buildID: string }; Querystring: { logsOffset?: string; limit?: string } }>;

const PAGE = 100;

/** E2B's template builder API (`Template.build`): request, file uploads, start, status with logs; tags and alias checks. */
export async function templateBuildRoutes(app: FastifyInstance, deps: E2bTemplateBuildDeps) {
  const { auth, templates, tags, requests, uploads } = deps;
  /** Which E2B step each Sandpit step of a started build came from, for its failure reason (kept a day, in this process). */
  const origins = new Map<string, TranslatedBuild['origin']>();
  const caller = e2bCaller(auth);

  const requestBuild = async (req: FastifyRequest, reply: { code(n: number): unknown }) => {
    const p = await caller(req, 'templates:write');
    const body = (req.body ?? {}) as { name?: unknown; alias?: unknown; tags?: unknown };
    const given = body.name ?? body.alias;
    if (typeof given !== 'string' || given === '') throw badRequest('name is required');
    const { name, tag } = splitTagged(given);
    const shown = name.slice(0, 128);
    if (!Value.Check(CreateTemplateBody.properties.name, name))
      throw badRequest(`'${shown}' is not a template name: 1 to 64 lower case letters, digits, '.', '_' or '-', starting with a letter or digit`);
    if (isE2bTemplateName(name) || name.startsWith('platform')) throw forbidden(`template name '${name}' is reserved`);
    if (body.tags !== undefined && (!Array.isArray(body.tags) || body.tags.some((t) => typeof t !== 'string'))) throw badRequest('tags must be a list of strings');
    const extra = (body.tags ?? []) as string[];
    for (const t of extra) checkTag(t);
    const all = [...new Set([...(tag ? [tag] : []), ...extra])];
    const r = await requests.reserve(p, name, all, Date.now());
    reply.code(202);
    return { templateID: r.templateId, buildID: r.buildId, public: false, names: [name], aliases: [name], tags: all };
  };
  app.post('/v3/templates', requestBuild);
  app.post('/v2/templates', requestBuild);

  app.get('/templates/:templateID/files/:hash', async (req: FastifyRequest<{ Params: { templateID: string; hash: string } }>, reply) => {
    const p = await caller(req, 'templates:write');
    const { templateID, hash } = req.params;
    if (!ARCHIVE_HASH.test(hash)) throw badRequest('hash must be a sha256 in hex');
    if (!(await requests.holds(p, templateID))) await templates.get(p, templateID);
    const present = await uploads.present(p.teamId, hash);
    reply.code(201);
    // Behind a TLS front the client came over HTTPS though this port saw HTTP: the link goes the client's way.
    const proto = req.headers['x-forwarded-proto'] === 'https' ? 'https' : req.protocol;
    return { present, url: uploads.link(`${proto}://${req.headers.host}`, p.teamId, hash, Date.now()) };
  });

  // The link is the credential, as a presigned storage URL is: no API key. Any content type is the archive's bytes.
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    raw.put('/template-files/:teamID/:hash', async (req: FastifyRequest<{ Params: { teamID: string; hash: string }; Querystring: { expires?: string; signature?: string } }>, reply) => {
      const body = req.body ?? req.raw;
      if (!(body instanceof Readable)) throw badRequest('send the archive as the request body');
      try {
        await uploads.receive({ teamId: req.params.teamID, hash: req.params.hash, ...req.query }, body, Date.now());
      } catch (err) {
        // What was not read of a refused upload is not waited for.
        reply.header('connection', 'close');
        throw err;
      }
      return reply.code(200).send();
    });
  });

  app.post('/v2/templates/:templateID/builds/:buildID', async (req: FastifyRequest<{ Params: { templateID: string; buildID: string } }>, reply) => {
    const p = await caller(req, 'templates:write');
    const { templateID, buildID } = req.params;
    const r = await requests.get(p, templateID, buildID, Date.now());
    if (!r) throw notFound(`build '${buildID.slice(0, 64)}' of template '${templateID.slice(0, 64)}' is not waiting for its definition`);
    const translated = translateBuild(r.name, (req.body ?? {}) as E2bBuildStart);
    if (!Value.Check(CreateTemplateBody, translated.body)) {
      const first = Value.Errors(CreateTemplateBody, translated.body)[0];
      throw badRequest(`the build is not one Sandpit can take: ${first ? `${first.instancePath || '/'} ${first.message}` : 'invalid'}`);
    }
    await templates.create(p, translated.body, {
      templateId: r.templateId,
      buildId: r.buildId,
      tags: r.tags,
      allowEmpty: true,
      ...(translated.noCacheFrom !== undefined ? { noCacheFrom: translated.noCacheFrom } : {}),
    });
    await requests.close(buildID);
    origins.set(buildID, translated.origin);
    setTimeout(() => origins.delete(buildID), 24 * 3600_000).unref();
    return reply.code(202).send();
  });

  app.get('/templates/:templateID/builds/:buildID/status', async (req: BuildRequest) => {
    const p = await caller(req, 'templates:read');
    const { templateID, buildID } = req.params;
    const offset = intOf(req.query.logsOffset, 'logsOffset', 0);
    const limit = Math.min(intOf(req.query.limit, 'limit', PAGE), PAGE);
    if (await requests.get(p, templateID, buildID, Date.now())) return { templateID, buildID, status: 'waiting', logs: [], logEntries: [] };
    const { build, past } = await templates.buildLog(p, templateID, buildID);
    const entries = past.filter((e) => e.line !== undefined).map(logEntry);
    const page = entries.slice(offset, offset + limit);
    const status = build.status === 'failed' ? 'error' : build.status;
    return {
      templateID: build.templateId,
      buildID,
      status,
      logs: page.map((e) => `[${e.timestamp}] ${e.message}`),
      logEntries: page,
      ...(build.status === 'failed' ? { reason: reasonOf(build, entries, origins.get(buildID)) } : {}),
    };
  });

  app.get('/templates/aliases/:alias', async (req: FastifyRequest<{ Params: { alias: string } }>) => {
    const p = await caller(req, 'templates:read');
    const { alias } = req.params;
    if (isE2bTemplateName(alias)) return { templateID: alias, public: true };
    const t = await templates.get(p, alias).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 404) throw notFound(`template '${alias.slice(0, 128)}' not found`);
      throw err;
    });
    return { templateID: t.id, public: false };
  });

  app.post('/templates/tags', async (req, reply) => {
    const p = await caller(req, 'templates:write');
    const body = (req.body ?? {}) as { target?: unknown; tags?: unknown };
    if (typeof body.target !== 'string' || !Array.isArray(body.tags) || body.tags.some((t) => typeof t !== 'string')) throw badRequest('target (name:tag) and tags (a list) are required');
    const r = await tags.assign(p, body.target, body.tags as string[]);
    reply.code(201);
    return { buildID: r.buildId, tags: r.tags };
  });

  app.delete('/templates/tags', async (req, reply) => {
    const p = await caller(req, 'templates:write');
    const body = (req.body ?? {}) as { name?: unknown; tags?: unknown };
    if (typeof body.name !== 'string' || !Array.isArray(body.tags) || body.tags.some((t) => typeof t !== 'string')) throw badRequest('name and tags (a list) are required');
    await tags.remove(p, body.name, body.tags as string[]);
    return reply.code(204).send();
  });

  app.get('/templates/:templateID/tags', async (req: TemplateParams) => {
    const p = await caller(req, 'templates:read');
    return (await tags.list(p, req.params.templateID)).map((t) => ({ tag: t.tag, buildID: t.buildId, createdAt: iso(t.createdAt) }));
  });
}

function intOf(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw)) throw badRequest(`${name} must be a non-negative integer`);
  return Number(raw);
}

function logEntry(e: BuildLogEvent) {
  return { timestamp: e.timestamp, level: 'info', message: e.line! };
}

/**
 * E2B's failure reason: the step (E2B's 1-based number, `base` for the image, `finalize` for start
 * and ready commands) and a message in E2B's words where a command failed.
 */
function reasonOf(build: BuildRecord, entries: ReturnType<typeof logEntry>[], origins: TranslatedBuild['origin'] | undefined) {
  const error = build.error ?? 'build_failed';
  const tail = entries.slice(-20).map((e) => ({ ...e, level: 'error' }));
  const code = error.split(':')[0];
  if (code === 'image_pull_failed') return { message: error, step: 'base', logEntries: tail };
  if (code === 'start_cmd_failed' || code === 'ready_cmd_failed') return { message: error, step: 'finalize', logEntries: tail };
  const failed = build.steps.find((s) => s.result === 'failed');
  const origin = failed ? origins?.[failed.index] : undefined;
  if (!origin) return { message: error, logEntries: tail };
  const noUser = /user (\S+): no such user/.exec(error);
  const detail = noUser ? `command failed: unauthenticated: invalid username: '${noUser[1]}'` : error;
  const message = origin.command !== undefined ? `failed to run command '${origin.command}': ${detail}` : detail;
  return { message, step: String(origin.e2bStep), logEntries: tail };
}
