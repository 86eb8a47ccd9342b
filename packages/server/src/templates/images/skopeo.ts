import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImagePullError } from './pull-error.ts';

/** How to reach one registry. */
export interface RegistryAccess {
  /** Plain HTTP (the operator listed the registry as insecure). */
  insecure: boolean;
  credentials?: { username: string; password: string };
}

const INSPECT_TIMEOUT = '60s';

/**
 * Runs skopeo against a registry with an auth file of our own (never the
 * host's, never credentials on a command line); skopeo does the Registry v2
 * protocol: basic and bearer-token auth, redirects, digest checks of blobs.
 */
async function skopeo(registry: string, access: RegistryAccess, args: (authFile: string) => string[], onLine?: (line: string) => void): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-auth-'));
  const authFile = join(dir, 'auth.json');
  try {
    const auths = access.credentials ? { [registry]: { auth: Buffer.from(`${access.credentials.username}:${access.credentials.password}`).toString('base64') } } : {};
    await writeFile(authFile, JSON.stringify({ auths }), { mode: 0o600 });
    // An empty registries.conf: no mirrors or rewrites of the host's decide where a reference is pulled from.
    await writeFile(join(dir, 'registries.conf'), '');
    return await run(['--insecure-policy', '--registries-conf', join(dir, 'registries.conf'), ...args(authFile)], onLine);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function run(args: string[], onLine?: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('skopeo', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir() } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      if (onLine) for (const l of c.split('\n')) if (l.trim()) onLine(l.trim());
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.on('error', (err) => reject(new ImagePullError(`skopeo could not be started: ${err.message}`)));
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new ImagePullError(classify(stderr)))));
  });
}

/** The raw manifest (or index) the registry serves for `ref` (`host/repo:tag` or `host/repo@digest`). */
export function inspectRaw(registry: string, ref: string, access: RegistryAccess): Promise<string> {
  return skopeo(registry, access, (authFile) => [
    '--command-timeout',
    INSPECT_TIMEOUT,
    'inspect',
    '--raw',
    '--retry-times',
    '0',
    '--authfile',
    authFile,
    `--tls-verify=${!access.insecure}`,
    `docker://${ref}`,
  ]);
}

/** Copies one image (by digest) into the OCI layout `layout` under `tag`; blobs already there are not fetched again. */
export function copyToLayout(registry: string, ref: string, access: RegistryAccess, layout: string, tag: string, onLine?: (line: string) => void): Promise<string> {
  return skopeo(
    registry,
    access,
    (authFile) => [
      'copy',
      '--retry-times',
      '2',
      '--src-authfile',
      authFile,
      `--src-tls-verify=${!access.insecure}`,
      '--override-os',
      'linux',
      '--override-arch',
      'amd64',
      `docker://${ref}`,
      `oci:${layout}:${tag}`,
    ],
    onLine,
  );
}

/** skopeo's last message, named by what went wrong. */
export function classify(stderr: string): string {
  const lines = stderr.trim().split('\n').filter(Boolean);
  const last = (lines.at(-1) ?? 'skopeo failed')
    .replace(/^time="[^"]*" level=\w+ msg="/, '')
    .replace(/"$/, '')
    .replace(/\\"/g, '"');
  const msg = last.replace(/^Error parsing image name "[^"]*": /, '').slice(0, 400);
  const has = (re: RegExp) => re.test(msg);
  // A status number only where it stands alone: a registry's port (localhost:40171) must not read as 401.
  const status = (codes: string) => new RegExp(`(?<![\\w:.])(${codes})(?![\\w.])`).test(msg);
  if (has(/Digest did not match|digest mismatch|size mismatch|expected size/i)) return `layer digest mismatch: ${msg}`;
  if (has(/unauthorized|authentication required|denied|invalid username\/password/i) || status('401|403')) return `denied: ${msg}`;
  if (has(/manifest unknown|name unknown|not found|repository name not known/i) || status('404')) return `not found: ${msg}`;
  if (has(/connection refused|no such host|i\/o timeout|network is unreachable|dial tcp|TLS|x509|certificate|server gave HTTP response|EOF|context deadline exceeded|pinging container registry/i)) {
    return `registry unreachable: ${msg}`;
  }
  if (has(/unmarshal|invalid character|unsupported|manifest/i)) return `malformed manifest: ${msg}`;
  return msg;
}
