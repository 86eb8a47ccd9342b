import { mkdir } from 'node:fs/promises';
import { badRequest } from '../../errors.ts';
import { parseImageRef } from '../../templates/images/image-ref.ts';
import type { ImageStore } from '../../templates/images/image-store.ts';
import type { ImageRunConfig } from '../../templates/images/manifest.ts';
import { platformLayer } from '../../templates/images/platform-layer.ts';
import { ImagePullError } from '../../templates/images/pull-error.ts';
import type { LayerCache } from '../../templates/layer-cache.ts';
import { type CreateTemplateBody, MAX_STEPS, type TemplateStep } from '../../schemas/template.ts';
import type { ResourcesRecord } from '../../store/sandboxes.ts';
import type { TemplateDefinition } from '../../store/templates.ts';
import { parseDockerfile, shellQuote } from './dockerfile.ts';
import { type BuildBase, BuildFailure, type BuildLog } from '../../templates/run-build.ts';

export interface RegistryAuth {
  username: string;
  /** Name of a team secret holding the password or token. */
  password_secret: string;
}

export interface ImageTemplateDeps {
  images: ImageStore;
  /** Where the platform layer over each image is cached (shared with step layers). */
  layers: LayerCache;
  insecureRegistries: string[];
  /** Docker Hub's images come from here instead (`host:port`). */
  dockerHubMirror?: string;
  maxBytes: number;
  /** A live team secret's value, undefined when there is none of that name. */
  secretValue(teamId: string, name: string): Promise<string | undefined>;
}

/** What a POST /templates body builds on, and its steps: a template, an image, or what a Dockerfile says. */
export interface BuildSource {
  /** Template name, or the image reference. */
  base: string;
  fromImage?: string;
  steps: TemplateStep[];
  startCmd?: string;
}

/** Reads base / from_image / dockerfile (exclusive); a bad reference or Dockerfile is the caller's error, answered at once. */
export async function buildSource(body: CreateTemplateBody, defaultBase: string, isTemplate: (name: string) => Promise<boolean>): Promise<BuildSource> {
  const given = (['base', 'from_image', 'dockerfile'] as const).filter((k) => body[k] !== undefined);
  if (given.length > 1) throw badRequest(`${given.join(' and ')} are exclusive: give one`);
  const image = body.from_image !== undefined || body.dockerfile !== undefined;
  if (body.registry_auth && !image) throw badRequest('registry_auth needs from_image or a dockerfile');
  if (body.use_image_cmd && !image) throw badRequest('use_image_cmd needs from_image or a dockerfile');
  const extra = body.steps ?? [];
  let source: BuildSource;
  if (body.from_image !== undefined) {
    source = { base: body.from_image, fromImage: checkedRef(body.from_image, 'from_image'), steps: extra };
  } else if (body.dockerfile !== undefined) {
    const df = parseDockerfile(body.dockerfile);
    const steps = [...df.steps, ...extra];
    const startCmd = df.startCmd ? { startCmd: df.startCmd } : {};
    source = (await isTemplate(df.from)) ? { base: df.from, steps, ...startCmd } : { base: df.from, fromImage: checkedRef(df.from, 'dockerfile FROM'), steps, ...startCmd };
  } else {
    source = { base: body.base ?? defaultBase, steps: extra };
  }
  if (source.steps.length > MAX_STEPS) throw badRequest(`the build has ${source.steps.length} steps, the limit is ${MAX_STEPS}`);
  return source;
}

function checkedRef(ref: string, field: string): string {
  try {
    parseImageRef(ref);
    return ref;
  } catch (err) {
    throw badRequest(`${field}: '${ref.slice(0, 128)}' is not an image reference: ${(err as Error).message}`);
  }
}

/** The build base of an image template definition; with use_image_cmd the image's ENTRYPOINT + CMD become start_cmd. */
export async function imageBase(deps: ImageTemplateDeps, teamId: string, def: TemplateDefinition, resources: ResourcesRecord, log: BuildLog): Promise<BuildBase> {
  const { base, config } = await imageBuildBase(deps, teamId, { ref: def.fromImage!, ...(def.registryAuth ? { auth: def.registryAuth } : {}) }, resources, log);
  const argv = [...(config.entrypoint ?? []), ...(config.cmd ?? [])];
  if (argv.length) log.line(`image command: ${argv.map(shellQuote).join(' ')}${def.useImageCmd && !def.startCmd ? ' (start_cmd)' : ''}`);
  if (def.useImageCmd && !def.startCmd && argv.length) base.startCmd = argv.map(shellQuote).join(' ');
  return base;
}

/**
 * Pulls the image (layers cached by digest) and turns it into a build base:
 * the unpacked image is the read-only root, the platform layer goes above it,
 * and the image's ENV, WORKDIR and USER carry over. Every failure is an
 * `image_pull_failed` build failure.
 */
export async function imageBuildBase(
  deps: ImageTemplateDeps,
  teamId: string,
  image: { ref: string; auth?: RegistryAuth },
  resources: ResourcesRecord,
  log: BuildLog,
): Promise<{ base: BuildBase; config: ImageRunConfig }> {
  try {
    const named = parseImageRef(image.ref);
    const ref = named.registry === 'docker.io' && deps.dockerHubMirror ? { ...named, registry: deps.dockerHubMirror } : named;
    if (ref !== named) log.line(`pulling ${image.ref} from the Docker Hub mirror ${ref.registry}`);
    let credentials: { username: string; password: string } | undefined;
    if (image.auth) {
      const password = await deps.secretValue(teamId, image.auth.password_secret);
      if (password === undefined) throw new ImagePullError(`denied: registry_auth.password_secret '${image.auth.password_secret}' is not a live secret of the team`);
      credentials = { username: image.auth.username, password };
    }
    const access = { insecure: deps.insecureRegistries.includes(ref.registry.toLowerCase()), ...(credentials ? { credentials } : {}) };
    const pulled = await deps.images.pull(ref, { access, maxBytes: deps.maxBytes, onLine: (l) => log.line(l) });
    await mkdir(deps.layers.dir, { recursive: true });
    const platform = await platformLayer(deps.layers, pulled.digest, pulled.rootfs, pulled.config.user).catch((err: Error) => {
      throw new BuildFailure('build_failed', `adding the platform layer to image ${pulled.digest} failed: ${err.message.split('\n')[0]!.slice(0, 300)}`);
    });
    log.line(`image ${pulled.digest}: user uid ${platform.account.uid}, home ${platform.account.home}`);
    return {
      config: pulled.config,
      base: {
        key: platform.key,
        baseRoot: pulled.rootfs,
        layers: [platform.root],
        env: pulled.config.env,
        resources,
        ...(pulled.config.workdir && pulled.config.workdir !== '/' ? { workdir: pulled.config.workdir } : {}),
      },
    };
  } catch (err) {
    if (err instanceof ImagePullError) throw new BuildFailure('image_pull_failed', err.message);
    if (err instanceof BuildFailure) throw err;
    throw new BuildFailure('image_pull_failed', (err as Error).message.split('\n')[0]!.slice(0, 400));
  }
}
