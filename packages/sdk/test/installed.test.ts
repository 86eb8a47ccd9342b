import assert from 'node:assert/strict';
import { readFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { ServerProcess } from '../../server/test/helpers/server-process.ts';
import { BIN, nodeBin, pack, REPO, run } from './helpers/runtimes.ts';
import { cjsProgram, esmProgram, expectedTour, TOUR, typedProgram } from './helpers/tour.ts';

// The package as a user gets it: packed, installed into a project outside the repository, used against a live server.
describe('the packed SDK, installed outside the repository', () => {
  let work: string;
  let project: string;
  let server: ServerProcess;
  let starting: Promise<ServerProcess> | undefined;
  let page: Server;
  let pageOrigin: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'sandpit-sdk-installed-'));
    project = join(work, 'app');
    await mkdir(project);
    // The page's origin must be known before the server starts: it is the one origin CORS lets in.
    page = await servePage(join(project, 'node_modules/@sandpit/sdk/dist/index.js'));
    pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    const install = async () => {
      const tarball = await pack('sdk', work);
      await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true }));
      const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], { cwd: project });
      assert.equal(installed.code, 0, installed.stderr);
    };
    starting = ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_CORS_ORIGINS: pageOrigin });
    [, server] = await Promise.all([install(), starting]);
  });

  after(async () => {
    page?.close();
    // Also a server that was still starting when the install failed.
    await (server ?? (await starting?.catch(() => undefined)))?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('ships the build only: ESM, CommonJS, declarations and source maps', async () => {
    const files = (await readdir(join(project, 'node_modules/@sandpit/sdk'), { recursive: true })).sort();
    assert.deepEqual(files, ['README.md', 'dist', 'dist/index.cjs', 'dist/index.cjs.map', 'dist/index.d.cts', 'dist/index.d.ts', 'dist/index.js', 'dist/index.js.map', 'package.json']);
    const map = JSON.parse(await readFile(join(project, 'node_modules/@sandpit/sdk/dist/index.js.map'), 'utf8')) as { sourcesContent?: unknown[] };
    assert.ok(map.sourcesContent?.length, 'the maps carry the sources, which the package does not ship');
  });

  it('type-checks a TypeScript user as ESM and as CommonJS', async () => {
    await writeFile(join(project, 'typed.mts'), typedProgram);
    await writeFile(join(project, 'typed.cts'), typedProgram);
    const tsconfig = {
      compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], strict: true, noEmit: true, skipLibCheck: false, types: [] },
      files: ['typed.mts', 'typed.cts'],
    };
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: project });
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
  });

  for (const major of [20, 22, 24] as const) {
    it(`works from Node ${major} as an ES module`, async () => {
      await tourIn('node', [`tour-${major}.mjs`], esmProgram(`node${major}`), `node${major}`, nodeBin(major));
    });
  }

  it('works from Node 20 through require (CommonJS)', async () => {
    await tourIn('node', ['tour.cjs'], cjsProgram('node20-cjs'), 'node20-cjs', nodeBin(20));
  });

  it('works from Bun', async () => {
    await tourIn(join(BIN, 'bun'), ['tour-bun.mjs'], esmProgram('bun'), 'bun');
  });

  it('works from a page in headless Chromium, across origins, where CORS lets the page in', async () => {
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const tab = await browser.newPage();
      await tab.goto(`${pageOrigin}/`);
      const options = { apiUrl: server.url, apiKey: server.key };
      const seen = await tab.evaluate(`window.sdkReady.then(() => tour(window.sdk, ${JSON.stringify(options)}, 'chromium'))`);
      assert.deepEqual(seen, expectedTour('chromium'));
      // The same page from an origin the server does not list is refused by the browser.
      const stranger = await browser.newPage();
      await stranger.goto(`${pageOrigin.replace('127.0.0.1', 'localhost')}/`);
      const refused = await stranger.evaluate(
        `window.sdkReady.then(() => window.sdk.Sandbox.get('00000000-0000-4000-8000-000000000000', ${JSON.stringify({ ...options, maxRetries: 0 })})).then(() => 'answered', (e) => e.name)`,
      );
      assert.equal(refused, 'ConnectionError');
    } finally {
      await browser.close();
    }
  });

  async function tourIn(cmd: string, args: string[], program: string, label: string, pathDir?: string) {
    await writeFile(join(project, args[0]!), program);
    const env = { SANDPIT_API_URL: server.url, SANDPIT_API_KEY: server.key, ...(pathDir ? { PATH: `${pathDir}:${process.env.PATH}` } : {}) };
    const out = await run(cmd, args, { cwd: project, env });
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), expectedTour(label));
  }
});

/** A page on its own origin that loads the installed package's ESM build, as a bundler-free site would. */
function servePage(sdkFile: string): Promise<Server> {
  // The module (deferred) loads the SDK; the classic script defines `tour` as a global for evaluate().
  const html = `<!doctype html><script type="module">import * as sdk from '/sdk.js'; window.sdk = sdk;</script><script>${TOUR}
window.sdkReady = new Promise((resolve) => { const wait = () => (window.sdk ? resolve() : setTimeout(wait, 10)); wait(); });
</script>`;
  const srv = createServer((req, res) => {
    if (req.url === '/sdk.js') {
      void readFile(sdkFile).then((js) => res.writeHead(200, { 'content-type': 'text/javascript' }).end(js));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(html);
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}
