import { createHash } from 'node:crypto';
import { ImagePullError } from './pull-error.ts';

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

export type ParsedManifest = { kind: 'index'; manifests: (Descriptor & { platform?: { os?: string; architecture?: string } })[] } | { kind: 'manifest'; config: Descriptor; layers: Descriptor[] };

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const INDEX_TYPES = new Set(['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json']);
const MANIFEST_TYPES = new Set(['application/vnd.oci.image.manifest.v1+json', 'application/vnd.docker.distribution.manifest.v2+json']);
const LAYER_TYPES = new Set([
  'application/vnd.oci.image.layer.v1.tar',
  'application/vnd.oci.image.layer.v1.tar+gzip',
  'application/vnd.oci.image.layer.v1.tar+zstd',
  'application/vnd.oci.image.layer.nondistributable.v1.tar',
  'application/vnd.oci.image.layer.nondistributable.v1.tar+gzip',
  'application/vnd.docker.image.rootfs.diff.tar.gzip',
  'application/vnd.docker.image.rootfs.foreign.diff.tar.gzip',
]);

export function sha256(raw: string): string {
  return `sha256:${createHash('sha256').update(raw).digest('hex')}`;
}

function malformed(why: string): ImagePullError {
  return new ImagePullError(`malformed manifest: ${why}`);
}

function descriptor(d: unknown, where: string): Descriptor {
  const o = d as Partial<Descriptor> | null;
  if (!o || typeof o !== 'object') throw malformed(`${where} is not a descriptor`);
  if (typeof o.digest !== 'string' || !DIGEST.test(o.digest)) throw malformed(`${where} has no sha256 digest`);
  if (typeof o.size !== 'number' || !Number.isSafeInteger(o.size) || o.size < 0) throw malformed(`${where} has no valid size`);
  return { mediaType: typeof o.mediaType === 'string' ? o.mediaType : '', digest: o.digest, size: o.size };
}

/** Checks a manifest or index as served, before anything is fetched by it. */
export function parseManifest(raw: string): ParsedManifest {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    throw malformed('not JSON');
  }
  if (!doc || typeof doc !== 'object') throw malformed('not a JSON object');
  if (doc.schemaVersion !== 2) throw malformed(`schemaVersion ${String(doc.schemaVersion).slice(0, 20)} is not supported (2 is)`);
  const type = typeof doc.mediaType === 'string' ? doc.mediaType : '';
  if (INDEX_TYPES.has(type) || (!type && Array.isArray(doc.manifests))) {
    if (!Array.isArray(doc.manifests)) throw malformed('index without manifests');
    return {
      kind: 'index',
      manifests: doc.manifests.map((m, i) => ({ ...descriptor(m, `manifests[${i}]`), platform: (m as { platform?: { os?: string; architecture?: string } }).platform })),
    };
  }
  if (type && !MANIFEST_TYPES.has(type)) throw malformed(`media type '${type.slice(0, 100)}' is not an image manifest`);
  if (!Array.isArray(doc.layers)) throw malformed('no layers');
  const config = descriptor(doc.config, 'config');
  const layers = doc.layers.map((l, i) => {
    const d = descriptor(l, `layers[${i}]`);
    if (!LAYER_TYPES.has(d.mediaType)) throw malformed(`layers[${i}] has media type '${d.mediaType.slice(0, 100)}', not a tar layer`);
    return d;
  });
  return { kind: 'manifest', config, layers };
}

/** The linux/amd64 image of an index. */
export function pickAmd64(index: Extract<ParsedManifest, { kind: 'index' }>): Descriptor {
  const m = index.manifests.find((d) => d.platform?.os === 'linux' && d.platform.architecture === 'amd64');
  if (!m) {
    const have = index.manifests.map((d) => `${d.platform?.os ?? '?'}/${d.platform?.architecture ?? '?'}`).join(', ');
    throw new ImagePullError(`no linux/amd64 image in the index (it has ${have || 'none'})`);
  }
  return m;
}

/** What the image's config says about how it runs. */
export interface ImageRunConfig {
  env: Record<string, string>;
  workdir?: string;
  user?: string;
  entrypoint?: string[];
  cmd?: string[];
}

export function runConfig(configJson: string): ImageRunConfig {
  let doc: { config?: { Env?: unknown; WorkingDir?: unknown; User?: unknown; Entrypoint?: unknown; Cmd?: unknown }; architecture?: string };
  try {
    doc = JSON.parse(configJson);
  } catch {
    throw new ImagePullError('malformed manifest: the image config is not JSON');
  }
  const c = doc.config ?? {};
  const env: Record<string, string> = {};
  for (const e of Array.isArray(c.Env) ? c.Env : []) {
    if (typeof e !== 'string') continue;
    const eq = e.indexOf('=');
    if (eq > 0) env[e.slice(0, eq)] = e.slice(eq + 1);
  }
  const strings = (v: unknown) => (Array.isArray(v) && v.every((x) => typeof x === 'string') && v.length > 0 ? (v as string[]) : undefined);
  const entrypoint = strings(c.Entrypoint);
  const cmd = strings(c.Cmd);
  return {
    env,
    ...(typeof c.WorkingDir === 'string' && c.WorkingDir.startsWith('/') ? { workdir: c.WorkingDir } : {}),
    ...(typeof c.User === 'string' && c.User ? { user: c.User } : {}),
    ...(entrypoint ? { entrypoint } : {}),
    ...(cmd ? { cmd } : {}),
  };
}
