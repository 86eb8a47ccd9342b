/** An image reference split as Docker reads it: `[registry/]repository[:tag][@digest]`. */
export interface ImageRef {
  /** `host[:port]`; Docker Hub is `docker.io`. */
  registry: string;
  repository: string;
  tag?: string;
  digest?: string;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const REPO_PART = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
/** Docker's tag rule (also the rule of template tags). */
export const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]{1,5})?$/;

/** Parses a reference; throws an Error with a readable reason when it is not one. */
export function parseImageRef(text: string): ImageRef {
  let rest = text.trim();
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw new Error(`'${digest.slice(0, 80)}' is not a sha256 digest`);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw new Error(`'${tag.slice(0, 80)}' is not a valid tag`);
  }
  const parts = rest.split('/');
  let registry = 'docker.io';
  // As Docker decides: a first part with a dot or a port, or localhost, names a registry.
  if (parts.length > 1 && (/[.:]/.test(parts[0]!) || parts[0] === 'localhost' || parts[0]!.startsWith('['))) {
    registry = parts.shift()!;
    if (!HOST.test(registry)) throw new Error(`'${registry.slice(0, 80)}' is not a registry host`);
  }
  if (parts.length === 0 || parts.some((p) => !REPO_PART.test(p))) throw new Error(`'${rest.slice(0, 128)}' is not a repository name (lower case letters, digits and . _ - separated by /)`);
  if (registry === 'docker.io' && parts.length === 1) parts.unshift('library');
  return { registry, repository: parts.join('/'), ...(tag ? { tag } : {}), ...(digest ? { digest } : {}), ...(!tag && !digest ? { tag: 'latest' } : {}) };
}

/** The reference written out in full (`docker://` form without the scheme). */
export function formatImageRef(r: ImageRef): string {
  return `${r.registry}/${r.repository}${r.tag ? `:${r.tag}` : ''}${r.digest ? `@${r.digest}` : ''}`;
}

/** The same repository pinned to one manifest digest. */
export function pinned(r: ImageRef, digest: string): string {
  return `${r.registry}/${r.repository}@${digest}`;
}
