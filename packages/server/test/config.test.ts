import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO as ROOT, SERVER_SRC as SRC, sourceFiles } from './helpers/source-files.ts';
import { loadConfig, SETTINGS } from '../src/config.ts';

test('every SANDPIT_* name the server mentions is a setting, and only config.ts reads the environment', async () => {
  for (const file of await sourceFiles(SRC)) {
    const text = await readFile(file, 'utf8');
    for (const [name] of text.matchAll(/\bSANDPIT_[A-Z0-9_]+/g)) {
      assert.ok(name in SETTINGS, `${file.slice(SRC.length + 1)} mentions ${name}, which is not in SETTINGS`);
    }
    if (!file.endsWith('/config.ts')) assert.doesNotMatch(text, /process\.env\.SANDPIT|env\.SANDPIT_|env\[['"]SANDPIT/, `${file} reads a setting itself`);
  }
});

test("every setting is in the README's configuration table", async () => {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'));
  const table = section.slice(0, section.indexOf('\n## '));
  for (const name of Object.keys(SETTINGS)) assert.ok(table.includes(`\`${name}\``), `${name} is missing from the README's configuration table`);
});

test('defaults apply when unset or empty; a bad number or driver is refused with its name', () => {
  const c = loadConfig({ SANDPIT_DATA_DIR: '/srv/sp', SANDPIT_RATE_LIMIT: '' });
  assert.equal(c.port, 3000);
  assert.equal(c.imageDir, '/srv/sp/images');
  assert.equal(c.rateLimitMax, 2000);
  assert.equal(c.templates.maxTemplateBytes, 8192 * 1024 * 1024);
  assert.equal(c.templates.capture, true);
  assert.equal(c.network.warm, 32);
  assert.equal(c.bootstrapApiKey, undefined);
  assert.equal(loadConfig({ SANDPIT_TEMPLATE_CAPTURE: '0' }).templates.capture, false);
  assert.throws(() => loadConfig({ SANDPIT_MAX_SNAPSHOTS: '-1' }), /SANDPIT_MAX_SNAPSHOTS must be a non-negative integer/);
  assert.throws(() => loadConfig({ SANDPIT_NET_WARM: '65' }), /SANDPIT_NET_WARM must be an integer from 0 to 64/);
  assert.throws(() => loadConfig({ SANDPIT_DRIVER: 'vm' }), /SANDPIT_DRIVER must be auto, container or gvisor/);
  assert.equal(c.checkpointCompression, 'none');
  assert.equal(loadConfig({ SANDPIT_CHECKPOINT_COMPRESSION: 'flate-best-speed' }).checkpointCompression, 'flate-best-speed');
  assert.throws(() => loadConfig({ SANDPIT_CHECKPOINT_COMPRESSION: 'zstd' }), /SANDPIT_CHECKPOINT_COMPRESSION must be none or flate-best-speed/);
});

test('SANDPIT_E2B_DOMAIN: unset is none; a host name with or without a port is taken; a URL is refused', () => {
  assert.equal(loadConfig({}).e2bDomain, undefined);
  assert.equal(loadConfig({ SANDPIT_E2B_DOMAIN: 'sandpit.example.com' }).e2bDomain, 'sandpit.example.com');
  assert.equal(loadConfig({ SANDPIT_E2B_DOMAIN: 'sandpit.example.com:8443' }).e2bDomain, 'sandpit.example.com:8443');
  for (const bad of ['https://sandpit.example.com', 'sandpit.example.com/e2b', 'api .example.com', '-leading.example.com']) {
    assert.throws(() => loadConfig({ SANDPIT_E2B_DOMAIN: bad }), /SANDPIT_E2B_DOMAIN must be a host name/);
  }
});

test('internal TLS: all three files or none; an API replica needs its internal port; a node names https replicas', () => {
  const key = 'k'.repeat(64);
  const files = { SANDPIT_TLS_CA: '/t/ca.crt', SANDPIT_TLS_CERT: '/t/m.crt', SANDPIT_TLS_KEY: '/t/m.key' };
  const node = { SANDPIT_ROLE: 'node', SANDPIT_CLUSTER_KEY: key, SANDPIT_NODE_ID: 'n1' };
  assert.equal(loadConfig({ ...node, SANDPIT_API_URL: 'http://a:1' }).cluster.tls, undefined);
  assert.throws(() => loadConfig({ ...node, SANDPIT_API_URL: 'https://a:1', SANDPIT_TLS_CA: '/t/ca.crt' }), /go together/);
  assert.throws(() => loadConfig({ ...node, ...files, SANDPIT_API_URL: 'http://a:1' }), /https:\/\/.*got 'http:\/\/a:1'/);
  assert.deepEqual(loadConfig({ ...node, ...files, SANDPIT_API_URL: 'https://a:1' }).cluster.tls, { ca: '/t/ca.crt', cert: '/t/m.crt', key: '/t/m.key' });
  const api = { SANDPIT_ROLE: 'api', SANDPIT_CLUSTER_KEY: key, ...files };
  assert.throws(() => loadConfig(api), /SANDPIT_INTERNAL_PORT/);
  assert.equal(loadConfig({ ...api, SANDPIT_INTERNAL_PORT: '8443' }).cluster.internalPort, 8443);
  // An operator's shell (role all) keeps the files for `cluster ... --via-env`.
  assert.equal(loadConfig(files).cluster.tls?.cert, '/t/m.crt');
});
