import { randomBytes } from 'node:crypto';
import { chmod, chown, copyFile, link, mkdir, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { runCommand } from '../../src/runtime/host/run-command.ts';

/** Host programs (with the libraries they load) that make a small Debian-like image. */
const DEBIAN_BINS = ['bash', 'dash', 'cat', 'id', 'ls', 'mkdir', 'chmod', 'chown', 'dirname', 'env', 'sleep', 'sync', 'stat', 'rm', 'touch', 'whoami', 'cut', 'grep'];

async function umoci(...args: string[]): Promise<void> {
  await runCommand('umoci', args);
}

/**
 * Makes image `tag` in the OCI layout: each `layers` function edits the root
 * as it stands (deletions become whiteouts), and is repacked as one layer.
 */
export async function makeImage(layout: string, tag: string, layers: ((root: string) => Promise<void>)[], config: string[] = []): Promise<void> {
  await umoci('new', '--image', `${layout}:${tag}`);
  for (const fill of layers) {
    const bundle = `${layout}-bundle-${tag}`;
    await rm(bundle, { recursive: true, force: true });
    await umoci('unpack', '--image', `${layout}:${tag}`, bundle);
    await fill(join(bundle, 'rootfs'));
    await umoci('repack', '--image', `${layout}:${tag}`, bundle);
    await rm(bundle, { recursive: true, force: true });
  }
  if (config.length) await umoci('config', '--image', `${layout}:${tag}`, ...config);
}

async function debianRoot(root: string): Promise<void> {
  for (const d of ['usr/bin', 'usr/lib/x86_64-linux-gnu', 'usr/lib64', 'etc', 'root', 'tmp', 'srv']) await mkdir(join(root, d), { recursive: true });
  for (const [l, t] of [
    ['bin', 'usr/bin'],
    ['lib', 'usr/lib'],
    ['lib64', 'usr/lib64'],
    ['sbin', 'usr/bin'],
  ])
    await symlink(t!, join(root, l!));
  const libs = new Set<string>();
  for (const b of DEBIAN_BINS) {
    const path = (await runCommand('sh', ['-c', `command -v ${b}`])).stdout.trim();
    await copyFile(path, join(root, 'usr/bin', b));
    const { stdout } = await runCommand('ldd', [path]).catch(() => ({ stdout: '' }));
    for (const m of stdout.matchAll(/(\/\S+) \(0x/g)) libs.add(m[1]!);
  }
  for (const lib of libs) {
    const dir = lib.includes('ld-linux') ? 'usr/lib64' : 'usr/lib/x86_64-linux-gnu';
    await runCommand('cp', ['-L', lib, join(root, dir, basename(lib))]);
  }
  await symlink('dash', join(root, 'usr/bin/sh'));
  await writeFile(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n');
  await writeFile(join(root, 'etc/group'), 'root:x:0:\ndaemon:x:1:\nnogroup:x:65534:\n');
  await writeFile(join(root, 'etc/os-release'), await readFile('/etc/os-release'));
  await writeFile(join(root, 'srv/from-image.txt'), 'image file\n');
  await chmod(join(root, 'tmp'), 0o1777);
}

/** A new OCI layout holding `debian`, a small Debian-like image. */
export async function makeDebianImage(layout: string): Promise<void> {
  await umoci('init', '--layout', layout);
  await makeImage(
    layout,
    'debian',
    [debianRoot],
    [
      '--config.env',
      'PATH=/usr/local/bin:/usr/bin:/bin',
      '--config.env',
      'IMAGE_VAR=from-image',
      '--config.workingdir',
      '/srv',
      '--config.cmd',
      '/bin/sh',
      '--config.cmd',
      '-c',
      '--config.cmd',
      'echo cmd-ran > /tmp/cmd-ran; exec sleep 100000',
    ],
  );
}

/** Every image the image-template tests pull, in one OCI layout. */
export async function makeTestImages(layout: string): Promise<void> {
  await makeDebianImage(layout);
  // No shell, no libc, no /etc: one static program.
  await makeImage(layout, 'busybox', [
    async (root) => {
      await copyFile('/bin/busybox', join(root, 'busybox'));
      await chmod(join(root, 'busybox'), 0o755);
    },
  ]);
  await makeImage(layout, 'layers', [
    async (root) => {
      await mkdir(join(root, 'bin'));
      await copyFile('/bin/busybox', join(root, 'bin/busybox'));
      await chmod(join(root, 'bin/busybox'), 0o755);
      await symlink('busybox', join(root, 'bin/sh'));
      await mkdir(join(root, 'data/dir'), { recursive: true });
      await writeFile(join(root, 'data/kept'), 'kept\n');
      await writeFile(join(root, 'data/gone'), 'gone\n');
      await writeFile(join(root, 'data/dir/inner'), 'inner\n');
      await writeFile(join(root, 'data/h1'), 'linked\n');
      await link(join(root, 'data/h1'), join(root, 'data/h2'));
      await writeFile(join(root, 'data/owned'), 'owned\n');
    },
    async (root) => {
      await unlink(join(root, 'data/gone'));
      await rm(join(root, 'data/dir'), { recursive: true });
      await chown(join(root, 'data/owned'), 1234, 4321);
      await chmod(join(root, 'data/owned'), 0o640);
      await writeFile(join(root, 'data/added'), 'added\n');
    },
  ]);
  for (const arch of ['amd64', 'arm64']) {
    await makeImage(
      layout,
      arch,
      [
        async (root) => {
          await copyFile('/bin/busybox', join(root, 'busybox'));
          await chmod(join(root, 'busybox'), 0o755);
          await writeFile(join(root, 'arch'), `${arch}\n`);
        },
      ],
      ['--architecture', arch],
    );
  }
  // Random bytes do not compress: over the test server's size limit either way.
  await makeImage(layout, 'big', [
    async (root) => {
      await writeFile(join(root, 'blob'), randomBytes(16 * 1024 * 1024));
    },
  ]);
  // A layer no other image has, for the test that corrupts it in the registry.
  await makeImage(layout, 'unique', [
    async (root) => {
      await writeFile(join(root, 'unique'), randomBytes(4096));
    },
  ]);
}

/** Pushes image `tag` of the layout to `dest` (`host:port/repo:tag`) over plain HTTP. */
export async function pushImage(layout: string, tag: string, dest: string, creds?: { username: string; password: string }): Promise<void> {
  await runCommand('skopeo', [
    '--insecure-policy',
    'copy',
    '--dest-tls-verify=false',
    ...(creds ? ['--dest-creds', `${creds.username}:${creds.password}`] : []),
    `oci:${layout}:${tag}`,
    `docker://${dest}`,
  ]);
}

/** Adds tag `name` for an index of the given tags' manifests (each with its config's platform), then pushes it whole. */
export async function pushIndex(layout: string, name: string, tags: { tag: string; arch: string }[], dest: string): Promise<void> {
  const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string; size: number; mediaType: string; annotations?: Record<string, string> }[] };
  const manifests = tags.map(({ tag, arch }) => {
    const m = index.manifests.find((d) => d.annotations?.['org.opencontainers.image.ref.name'] === tag)!;
    return { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: m.digest, size: m.size, platform: { os: 'linux', architecture: arch } };
  });
  const blob = JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests });
  const { createHash } = await import('node:crypto');
  const hex = createHash('sha256').update(blob).digest('hex');
  await writeFile(join(layout, 'blobs/sha256', hex), blob);
  index.manifests.push({ mediaType: 'application/vnd.oci.image.index.v1+json', digest: `sha256:${hex}`, size: Buffer.byteLength(blob), annotations: { 'org.opencontainers.image.ref.name': name } });
  await writeFile(join(layout, 'index.json'), JSON.stringify(index));
  await runCommand('skopeo', ['--insecure-policy', 'copy', '--all', '--dest-tls-verify=false', `oci:${layout}:${name}`, `docker://${dest}`]);
}
