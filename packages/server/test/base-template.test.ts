import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { type BuildProgress, ensureBaseTemplate } from '../src/templates/base-template.ts';

const run = promisify(execFile);
const imageDir = process.env.SANDPIT_IMAGE_DIR ?? '/var/lib/sandpit/images';
// npm keeps a compile cache in /tmp: these checks run in the shared template root, which must stay as built.
const ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', LANG: 'C.UTF-8', NODE_DISABLE_COMPILE_CACHE: '1' };

async function inRoot(root: string, ...args: string[]): Promise<string> {
  const { stdout, stderr } = await run('chroot', [root, ...args], { env: ENV });
  return `${stdout}${stderr}`.trim();
}

test('platform/base builds (or is reused) and has the promised tools', { timeout: 20 * 60_000 }, async () => {
  let lastPhase = '';
  let lastPrint = 0;
  const started = Date.now();
  const onProgress = (p: BuildProgress) => {
    const now = Date.now();
    if (p.phase !== lastPhase || now - lastPrint > 2000 || p.done === p.total) {
      console.log(`[${((now - started) / 1000).toFixed(1)}s] ${p.phase} ${p.done}/${p.total}${p.line ? ` ${p.line}` : ''}`);
      lastPhase = p.phase;
      lastPrint = now;
    }
  };
  const root = await ensureBaseTemplate(imageDir, { mirror: loadConfig().templates.debianMirror, onProgress });
  console.log(`template root ${root} ready in ${Date.now() - started} ms`);
  // A second call hits the cache.
  const t0 = performance.now();
  assert.equal(await ensureBaseTemplate(imageDir), root);
  assert.ok(performance.now() - t0 < 50, 'cached template is returned without a rebuild');

  assert.match(await inRoot(root, 'python3', '--version'), /^Python 3\.\d+/);
  assert.match(await inRoot(root, 'node', '--version'), /^v22\./);
  assert.match(await inRoot(root, 'npm', '--version'), /^10\./);
  assert.match(await inRoot(root, 'npx', '--version'), /^10\./);
  assert.match(await inRoot(root, 'git', '--version'), /^git version/);
  assert.match(await inRoot(root, 'curl', '--version'), /^curl /);
  assert.match(await inRoot(root, 'gcc', '--version'), /gcc/);
  assert.match(await inRoot(root, 'make', '--version'), /GNU Make/);
  assert.match(await inRoot(root, 'python3', '-m', 'venv', '--help'), /usage: venv/);
  assert.match(await inRoot(root, 'pip', '--version'), /^pip /);
  assert.equal(await inRoot(root, 'id', '-u', 'user'), '1000');
  assert.equal(await inRoot(root, 'id', '-g', 'user'), '1000');
  assert.equal(await inRoot(root, 'getent', 'passwd', 'user'), 'user:x:1000:1000::/home/user:/bin/bash');
  const home = statSync(`${root}/home/user`);
  assert.ok(home.isDirectory());
  assert.equal(home.uid, 1000);
  assert.equal(statSync(`${root}/tmp`).mode & 0o7777, 0o1777);
  assert.ok(existsSync(`${root}/run/sandpit`));
  assert.ok(existsSync(`${root}/.sandpit/agent`));
  assert.doesNotMatch(await inRoot(root, 'cat', '/etc/resolv.conf'), /nameserver/);
});
