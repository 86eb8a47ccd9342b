import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KeyedLock } from '../../runtime/host/keyed-lock.ts';
import { runCommand } from '../../runtime/host/run-command.ts';
import { acquireLock } from '../build-lock.ts';
import { formatImageRef, type ImageRef, pinned } from './image-ref.ts';
import { type ImageRunConfig, parseManifest, pickAmd64, runConfig, sha256 } from './manifest.ts';
import { ImagePullError } from './pull-error.ts';
import { copyToLayout, inspectRaw, type RegistryAccess } from './skopeo.ts';
import { isAlive } from '../../runtime/host/pids.ts';

/** An image unpacked on the host, ready to be a template's read-only root. */
export interface PulledImage {
  /** Manifest digest (of the linux/amd64 image when the reference names an index). */
  digest: string;
  rootfs: string;
  config: ImageRunConfig;
  cached: boolean;
}

export interface PullOptions {
  access: RegistryAccess;
  /** Compressed (as declared) and unpacked size may each be at most this. */
  maxBytes: number;
  onLine?: (line: string) => void;
}

/**
 * Images pulled from registries: one OCI layout whose blobs (layers, configs,
 * manifests) are stored once by digest and shared by every image, and one
 * unpacked root per manifest digest (`rootfs/<hex>/rootfs`, never changed
 * after it is complete) that every template of that image shares.
 */
export class ImageStore {
  readonly dir: string;
  readonly #mutex = new KeyedLock();
  #swept: Promise<void> | undefined;

  constructor(dir: string) {
    this.dir = dir;
  }

  get layout(): string {
    return join(this.dir, 'oci');
  }

  /** Resolves `ref` at the registry (always: access is checked on every pull) and unpacks it unless cached. */
  async pull(ref: ImageRef, opts: PullOptions): Promise<PulledImage> {
    const say = opts.onLine ?? (() => undefined);
    const name = formatImageRef(ref);
    say(`resolving ${name}`);
    let raw = await inspectRaw(ref.registry, ref.digest ? pinned(ref, ref.digest) : name, opts.access);
    let digest = sha256(raw);
    if (ref.digest && digest !== ref.digest) throw new ImagePullError(`malformed manifest: the registry served ${digest} for ${ref.digest}`);
    let m = parseManifest(raw);
    if (m.kind === 'index') {
      const chosen = pickAmd64(m);
      say(`index: using linux/amd64 image ${chosen.digest}`);
      raw = await inspectRaw(ref.registry, pinned(ref, chosen.digest), opts.access);
      digest = sha256(raw);
      if (digest !== chosen.digest) throw new ImagePullError(`malformed manifest: the registry served ${digest} for ${chosen.digest}`);
      m = parseManifest(raw);
      if (m.kind === 'index') throw new ImagePullError('malformed manifest: an index points at another index');
    }
    const declared = m.config.size + m.layers.reduce((n, l) => n + l.size, 0);
    if (declared > opts.maxBytes) throw tooLarge(`its layers hold ${mib(declared)} MiB compressed`, opts.maxBytes);
    this.#swept ??= this.#sweep();
    await this.#swept;
    const hex = digest.slice('sha256:'.length);
    const bundle = join(this.dir, 'rootfs', hex);
    return this.#mutex.run(hex, async () => {
      const cachedConfig = await readImageJson(bundle);
      if (cachedConfig) {
        say(`image ${digest} is cached`);
        return { digest, rootfs: join(bundle, 'rootfs'), config: cachedConfig, cached: true };
      }
      say(`pulling ${digest}: ${m.layers.length} layers, ${mib(declared)} MiB`);
      // One skopeo/umoci at a time per store: both rewrite the layout's index.json.
      await mkdir(join(this.dir, 'rootfs'), { recursive: true });
      const release = await this.#mutex.run('\0layout', () => acquireLock(join(this.dir, '.layout.lock')));
      const tmp = join(this.dir, 'rootfs', `.tmp-${hex}-${process.pid}`);
      try {
        const again = await readImageJson(bundle);
        if (again) return { digest, rootfs: join(bundle, 'rootfs'), config: again, cached: true };
        await copyToLayout(ref.registry, pinned(ref, digest), opts.access, this.layout, hex, (l) => say(l));
        say('unpacking');
        await rm(tmp, { recursive: true, force: true });
        await mkdir(tmp);
        // umoci checks every blob against its digest again and applies whiteouts, hard links, owners and modes;
        // `raw unpack` writes only the root (no runtime config, no mtree hashing every file).
        await runCommand('umoci', ['raw', 'unpack', '--image', `${this.layout}:${hex}`, join(tmp, 'rootfs')]).catch((err: Error) => {
          throw new ImagePullError(`unpacking failed: ${err.message.split('\n').slice(-1)[0]!.slice(0, 300)}`);
        });
        const bytes = await treeBytes(join(tmp, 'rootfs'));
        if (bytes > opts.maxBytes) throw tooLarge(`it unpacks to ${mib(bytes)} MiB`, opts.maxBytes);
        const config = runConfig(await this.#configOf(hex));
        await writeFile(join(tmp, 'image.json'), JSON.stringify({ digest, config }));
        await rm(bundle, { recursive: true, force: true });
        await rename(tmp, bundle);
        say(`unpacked ${mib(bytes)} MiB`);
        return { digest, rootfs: join(bundle, 'rootfs'), config, cached: false };
      } catch (err) {
        await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
        throw err;
      } finally {
        await release();
      }
    });
  }

  /** Hex digests of the unpacked images. */
  async unpacked(): Promise<string[]> {
    return (await readdir(join(this.dir, 'rootfs')).catch(() => [] as string[])).filter((e) => /^[0-9a-f]{64}$/.test(e));
  }

  /**
   * Removes the unpacked image `hex` and, from the layout, its tag and every blob no other image
   * there refers to; under the same locks as a pull, so a pull of it waits and then unpacks it anew.
   */
  async remove(hex: string): Promise<void> {
    await this.#mutex.run(hex, async () => {
      const release = await this.#mutex.run('\0layout', () => acquireLock(join(this.dir, '.layout.lock')));
      try {
        const doomed = join(this.dir, 'rootfs', `.tmp-gone-${hex}-${process.pid}`);
        await rename(join(this.dir, 'rootfs', hex), doomed).catch(() => undefined);
        await rm(doomed, { recursive: true, force: true });
        await this.#dropFromLayout(hex);
      } finally {
        await release();
      }
    });
  }

  async #dropFromLayout(tag: string): Promise<void> {
    const indexPath = join(this.layout, 'index.json');
    const index = await readFile(indexPath, 'utf8').then(
      (t) => JSON.parse(t) as { manifests: { digest: string; annotations?: Record<string, string> }[] },
      () => undefined,
    );
    if (!index) return;
    index.manifests = index.manifests.filter((d) => d.annotations?.['org.opencontainers.image.ref.name'] !== tag);
    const kept = new Set<string>();
    for (const d of index.manifests) {
      kept.add(d.digest);
      const manifest = await readFile(this.#blob(d.digest), 'utf8').then(
        (t) => JSON.parse(t) as { config?: { digest: string }; layers?: { digest: string }[] },
        () => ({}) as { config?: { digest: string }; layers?: { digest: string }[] },
      );
      if (manifest.config) kept.add(manifest.config.digest);
      for (const l of manifest.layers ?? []) kept.add(l.digest);
    }
    await writeFile(`${indexPath}.tmp`, JSON.stringify(index));
    await rename(`${indexPath}.tmp`, indexPath);
    const blobs = join(this.layout, 'blobs', 'sha256');
    for (const b of await readdir(blobs).catch(() => [] as string[])) {
      if (!kept.has(`sha256:${b}`)) await rm(join(blobs, b), { force: true });
    }
  }

  /** Removes what a pull of a process that died (a killed server) left half-unpacked. */
  async #sweep(): Promise<void> {
    const dir = join(this.dir, 'rootfs');
    for (const e of await readdir(dir).catch(() => [] as string[])) {
      const pid = Number(/^\.tmp-[0-9a-f]+-(\d+)$/.exec(e)?.[1]);
      if (pid && !isAlive(pid)) await rm(join(dir, e), { recursive: true, force: true });
    }
  }

  /** The config blob of the image tagged `tag` in the layout (as skopeo wrote it, in OCI form). */
  async #configOf(tag: string): Promise<string> {
    const index = JSON.parse(await readFile(join(this.layout, 'index.json'), 'utf8')) as { manifests: { digest: string; annotations?: Record<string, string> }[] };
    const entry = index.manifests.find((d) => d.annotations?.['org.opencontainers.image.ref.name'] === tag);
    if (!entry) throw new ImagePullError('the pulled image is missing from the layout');
    const manifest = JSON.parse(await readFile(this.#blob(entry.digest), 'utf8')) as { config: { digest: string } };
    return readFile(this.#blob(manifest.config.digest), 'utf8');
  }

  #blob(digest: string): string {
    return join(this.layout, 'blobs', ...digest.split(':'));
  }
}

async function readImageJson(bundle: string): Promise<ImageRunConfig | undefined> {
  if (
    !(await stat(join(bundle, 'rootfs')).then(
      () => true,
      () => false,
    ))
  )
    return undefined;
  try {
    return (JSON.parse(await readFile(join(bundle, 'image.json'), 'utf8')) as { config: ImageRunConfig }).config;
  } catch {
    return undefined;
  }
}

/** Apparent size of an unpacked root (hard links once); du walks a large tree several times faster than fs calls from here. */
async function treeBytes(path: string): Promise<number> {
  const { stdout } = await runCommand('du', ['-sb', path]);
  return Number(stdout.split('\t')[0]);
}

function tooLarge(what: string, max: number): ImagePullError {
  return new ImagePullError(`image_too_large: ${what}, the limit is ${mib(max)} MiB`);
}

function mib(bytes: number): number {
  return Math.ceil(bytes / 1024 / 1024);
}
