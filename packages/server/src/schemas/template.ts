import { type Static, Type } from 'typebox';
import { DateTime, Resources } from './common.ts';
import { EnvVars } from './sandbox.ts';

/** Request bodies of POST /templates may carry inline files: up to this many bytes in all. */
export const TEMPLATE_BODY_LIMIT = 8 * 1024 * 1024;
/** One copied file, decoded. */
export const COPY_MAX_BYTES = 4 * 1024 * 1024;
export const MAX_STEPS = 48;
/** The name of an uploaded build-context archive: its client's sha256, in hex. */
export const ARCHIVE_HASH = /^[0-9a-f]{64}$/;

/** Any account of the template's root file system: the build fails (step_failed) when it has none of that name. */
const Account = Type.String({ pattern: '^[a-z_][a-z0-9_.-]{0,31}$', description: "An account of the template's /etc/passwd: root, user (uid 1000, the default) or one a step added" });
const AbsPath = Type.String({ minLength: 2, maxLength: 1024, pattern: '^/', description: 'Absolute path inside the sandbox' });

export const RunStep = Type.Object(
  {
    type: Type.Literal('run'),
    command: Type.String({ minLength: 1, maxLength: 65536, description: 'Run with /bin/sh -c; a non-zero exit fails the build (step_failed)' }),
    user: Type.Optional(Account),
    timeout_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, description: 'Default 600' })),
  },
  { additionalProperties: false },
);

export const CopyStep = Type.Object(
  {
    type: Type.Literal('copy'),
    path: AbsPath,
    content_base64: Type.String({ maxLength: Math.ceil(COPY_MAX_BYTES / 3) * 4, description: 'File content, base64; at most 4 MiB decoded' }),
    mode: Type.Optional(Type.String({ pattern: '^[0-7]{3,4}$', description: 'Octal, default 0644' })),
    user: Type.Optional(Type.Union([Type.Literal('root'), Type.Literal('user')], { description: 'Owner, default user; missing parent directories are created as this user' })),
  },
  { additionalProperties: false },
);

export const EnvStep = Type.Object(
  { type: Type.Literal('env'), env: EnvVars },
  { additionalProperties: false, description: "Sets variables for later steps, start_cmd, ready_cmd and every sandbox of the template (callers' env wins)" },
);

export const WorkdirStep = Type.Object(
  { type: Type.Literal('workdir'), path: AbsPath },
  { additionalProperties: false, description: 'Working directory of later steps, start_cmd, ready_cmd and of exec in sandboxes of the template (created when missing)' },
);

export const ArchiveStep = Type.Object(
  {
    type: Type.Literal('archive'),
    archive: Type.String({ pattern: ARCHIVE_HASH.source, description: "An uploaded build-context archive of the team (tar, gzip or not): what E2B's template builder uploads for its COPY" }),
    src: Type.String({ minLength: 1, maxLength: 4096, description: 'A path or shell pattern inside the archive: relative, without .. parts' }),
    dest: Type.String({
      minLength: 1,
      maxLength: 1024,
      description:
        'Absolute, or relative to the working directory (default /home/user). A directory when it ends in /, is one already, or takes several entries or a directory; a directory src gives its contents, entries a pattern matched keep their names',
    }),
    user: Type.Optional(Account),
    mode: Type.Optional(Type.String({ pattern: '^[0-7]{3,4}$', description: 'Octal mode of the copied files (directories keep theirs)' })),
  },
  { additionalProperties: false, description: 'Copies entries of an uploaded archive into the template, owned by user (default user)' },
);

export const TemplateStep = Type.Union([RunStep, CopyStep, EnvStep, WorkdirStep, ArchiveStep]);
export type TemplateStep = Static<typeof TemplateStep>;

export const CreateTemplateBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[a-z0-9][a-z0-9._-]*$',
      description: 'Unique per team. Posting an existing name rebuilds that template: the previous version serves new sandboxes until the new one is ready. The platform/ prefix is reserved.',
    }),
    base: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: 'Template to build on (UUID or name): platform/base (default), a curated platform/* template, or a ready template of the team' }),
    ),
    from_image: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description:
          "Build on a container image instead (`[registry/]repository[:tag][@sha256:...]`, Docker Hub when no registry is named; linux/amd64 out of a multi-arch index). Its ENV and WORKDIR carry over; a `user` account is added unless the image has one (the image's non-root USER account becomes `user`). Steps, start_cmd and ready_cmd need /bin/sh in the image; exec with args does not. Exclusive with base and dockerfile.",
      }),
    ),
    registry_auth: Type.Optional(
      Type.Object(
        {
          username: Type.String({ minLength: 1, maxLength: 256 }),
          password_secret: Type.String({ minLength: 1, maxLength: 64, description: 'Name of a team secret holding the password or token' }),
        },
        { additionalProperties: false, description: 'Credentials for from_image (or a Dockerfile FROM image) at a private registry' },
      ),
    ),
    use_image_cmd: Type.Optional(Type.Boolean({ description: "With from_image (or a Dockerfile FROM image) and no start_cmd: the image's ENTRYPOINT and CMD (shell-quoted) become start_cmd" })),
    dockerfile: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024 * 1024,
        description:
          "Dockerfile text: one FROM (an image, or a template name) then RUN, COPY of inline heredocs, ENV, WORKDIR, USER, ARG, CMD, ENTRYPOINT; anything else is a bad_request naming the line. RUN and COPY run as root until a USER names another account (which runs as `user`); CMD/ENTRYPOINT become start_cmd unless start_cmd is given. body steps run after the Dockerfile's. Exclusive with base and from_image.",
      }),
    ),
    steps: Type.Optional(
      Type.Array(TemplateStep, {
        maxItems: MAX_STEPS,
        description: "Run in order; every run/copy step's filesystem result is cached by content hash, so a rebuild re-runs only the changed step and those after it",
      }),
    ),
    start_cmd: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 65536,
        description:
          'Kept running (as user, in the background) in every sandbox of the template; exiting before the sandbox is ready fails it (start_cmd_failed), unless it exits 0 while a ready_cmd decides',
      }),
    ),
    ready_cmd: Type.Optional(
      Type.String({ minLength: 1, maxLength: 65536, description: 'Polled until it exits 0 before a sandbox counts as ready; create returns only then (ready_cmd_failed when it never passes)' }),
    ),
    ready_timeout_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 600, description: 'Bound on the ready wait, default 60' })),
    no_cache: Type.Optional(Type.Boolean({ description: 'Run every step even where its layer is cached (as docker build --no-cache)' })),
    warm_pool: Type.Optional(Type.Integer({ minimum: 0, maximum: 16, description: 'Pre-started sandboxes kept ready for instant create (default 0)' })),
  },
  { additionalProperties: false },
);
export type CreateTemplateBody = Static<typeof CreateTemplateBody>;

export const TemplateStatus = Type.Union([Type.Literal('building'), Type.Literal('ready'), Type.Literal('failed'), Type.Literal('pending')]);

export const Template = Type.Object(
  {
    id: Type.String({ description: 'UUID, or the name of a curated platform/* template' }),
    name: Type.String(),
    curated: Type.Boolean({ description: 'A platform/* template: visible to every team, read-only' }),
    status: TemplateStatus,
    error: Type.Optional(
      Type.String({
        description: 'Set when status is failed: `<code>: <detail>` with code image_pull_failed, step_failed, boot_failed, snapshot_failed, start_cmd_failed, ready_cmd_failed or build_failed',
      }),
    ),
    usable: Type.Boolean({ description: 'Sandboxes can be created from it: a version is built (a rebuild that fails keeps the previous version)' }),
    base: Type.String({ description: 'The template built on, or the image reference for image templates' }),
    from_image: Type.Optional(Type.String({ description: 'Set when the template is built from an image (from_image or a Dockerfile FROM image)' })),
    steps: Type.Array(TemplateStep),
    start_cmd: Type.Optional(Type.String()),
    ready_cmd: Type.Optional(Type.String()),
    ready_timeout_s: Type.Integer(),
    warm_pool: Type.Integer(),
    warm_pool_ready: Type.Integer({ description: 'Pre-started sandboxes waiting right now' }),
    captured: Type.Boolean({
      description: 'gvisor: the current version was captured with start_cmd running, so sandboxes are restored from it instead of booting (set shortly after a build)',
    }),
    latest_build_id: Type.Optional(Type.String()),
    resources: Resources,
    created_at: DateTime,
    updated_at: DateTime,
  },
  {
    $id: 'Template',
    description: 'Curated templates (platform/*) report status pending until first used, when they are built (and cached by recipe hash).',
  },
);
export type Template = Static<typeof Template>;

export const TemplateWithBuild = Type.Object({ ...Template.properties, build_id: Type.String({ description: 'The build this request started; follow it at /templates/{id}/builds/{build_id}/logs' }) });

export const TemplateList = Type.Object({ templates: Type.Array(Type.Ref('Template')) });

export const BuildStep = Type.Object({
  index: Type.Integer(),
  type: Type.String(),
  result: Type.Union([Type.Literal('ran'), Type.Literal('cached'), Type.Literal('failed'), Type.Literal('pending'), Type.Literal('config')], {
    description: 'config: env/workdir steps, which change no files',
  }),
  duration_ms: Type.Optional(Type.Integer()),
});

export const TemplateBuild = Type.Object({
  id: Type.String(),
  template_id: Type.String(),
  status: Type.Union([Type.Literal('building'), Type.Literal('ready'), Type.Literal('failed')]),
  error: Type.Optional(Type.String()),
  steps: Type.Array(BuildStep),
  created_at: DateTime,
  finished_at: Type.Optional(DateTime),
});

export const TemplateIdParam = Type.Object({ template_id: Type.String({ description: 'Template UUID or name (platform/* names included, URL-encoded)' }) });
export type TemplateIdParam = Static<typeof TemplateIdParam>;
export const BuildParams = Type.Object({ template_id: Type.String(), build_id: Type.String() });
export type BuildParams = Static<typeof BuildParams>;
