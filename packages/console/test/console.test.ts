import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { Api, ServerProcess } from '../../server/test/helpers/server-process.ts';
import { Receiver } from '../../server/test/helpers/webhook-receiver.ts';
import { buildConsole, consoleIsStale } from '../scripts/build-if-stale.ts';
import { CHROMIUM } from './chromium.ts';

const SHOTS = new URL('../../../docs/console/', import.meta.url).pathname;

let server: ServerProcess;
/** Where the webhook the console registers delivers (allowed although it is on loopback). */
let receiver: Receiver;
let browser: Browser;
let page: Page;
/** Console errors and uncaught page errors while signed in; the flows must leave none. */
const errors: string[] = [];
let watching = false;

before(async () => {
  if (consoleIsStale()) buildConsole();
  receiver = await Receiver.start();
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_METRICS_INTERVAL_MS: '500', SANDPIT_WEBHOOK_ALLOW_HOSTS: receiver.hostPort });
  browser = await chromium.launch(CHROMIUM);
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1366, height: 900 } });
  // A loaded shared host can be slow; behaviour, not speed, is under test here.
  context.setDefaultTimeout(60_000);
  page = await context.newPage();
  page.on('console', (m) => watching && m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await receiver?.close();
});

const url = (path: string) => `${server.url}/console${path}`;

async function signIn(p: Page, key: string): Promise<void> {
  await p.goto(url('/'));
  await p.getByLabel('API key').fill(key);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

test('a wrong key is refused and the page keeps no key', async () => {
  await page.goto(url('/'));
  await page.getByLabel('API key').waitFor();
  await page.screenshot({ path: `${SHOTS}sign-in.png` });
  // Keyboard: the key field, then the button, are reachable with Tab.
  await page.locator('body').focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'api-key');
  await page.keyboard.type('x'); // the button is disabled while the field is empty
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Sign in');
  await signIn(page, 'sp_wrong_key');
  assert.equal((await page.request.get(`${server.url}/console/assets/missing.js`)).status(), 404);
  await page.getByRole('alert').filter({ hasText: 'invalid API key' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
});

test('sign in, create a sandbox, terminal, files, exec, pause and resume, metrics', async () => {
  await signIn(page, server.key);
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
  watching = true;
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie + document.documentElement.outerHTML);
  assert.ok(!stored.includes(server.key), 'the key is not kept in the page');

  await page.getByRole('link', { name: 'New sandbox' }).click();
  await page.getByLabel('Name').fill('e2e-box');
  await page.getByLabel('Metadata (key=value per line)').fill('purpose=e2e');
  await page.getByRole('button', { name: 'Create sandbox' }).click();
  await page.getByRole('heading', { name: 'e2e-box' }).waitFor({ timeout: 60_000 });
  const status = page.getByRole('toolbar', { name: 'Sandbox actions' }).locator('.status');
  await status.filter({ hasText: 'active' }).waitFor();

  // Terminal: a keystroke round trip through the PTY.
  await page.getByRole('button', { name: 'Open terminal' }).click();
  await page.getByText('Terminal connected').waitFor();
  await page.locator('.xterm').click();
  await page.keyboard.type('echo $((6*7))x\n');
  await page.locator('.xterm-rows').filter({ hasText: '42x' }).waitFor();

  // Files: upload with progress, then download the same bytes.
  const content = `hello from the browser ${Date.now()}\n`;
  await page.locator('input[type=file]').setInputFiles({ name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from(content) });
  await page.getByText('Uploaded note.txt').waitFor();
  await page.getByRole('list', { name: 'Files' }).getByText('note.txt').waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download note.txt' }).click()]);
  assert.equal(await readFile((await download.path())!, 'utf8'), content);
  await page.getByText('Downloaded note.txt').waitFor();

  // Exec with streamed output.
  await page.getByLabel('Command', { exact: true }).fill('for i in 1 2 3; do echo line-$i; done; exit 3');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByText('exit code 3').waitFor();
  assert.match(await page.getByLabel('Command output').innerText(), /line-1\nline-2\nline-3/);

  // Metrics: the charts draw sampled points.
  await page.waitForFunction(() => Number(document.querySelector('[data-points]')?.getAttribute('data-points')) >= 3, undefined, { timeout: 20_000 });
  assert.ok((await page.locator('.chart canvas').count()) >= 3);
  await page.screenshot({ path: `${SHOTS}sandbox.png`, fullPage: true });

  // Pause and resume: the status follows; the events list says why.
  await page.getByRole('button', { name: 'Pause' }).click();
  await status.filter({ hasText: 'paused' }).waitFor();
  await page.getByRole('button', { name: 'Resume' }).click();
  await status.filter({ hasText: 'active' }).waitFor();
  await page.getByRole('list', { name: 'Lifecycle events' }).getByText('paused by request').waitFor({ timeout: 10_000 });

  // The list: live status and filters.
  await page.getByRole('link', { name: 'Sandboxes' }).click();
  await page.getByRole('link', { name: 'e2e-box' }).waitFor();
  await page.getByLabel('Metadata').fill('purpose=nothing');
  await page.getByText('No sandboxes match.').waitFor();
  await page.getByLabel('Metadata').fill('purpose=e2e');
  await page.getByLabel('Status').selectOption('active');
  await page.getByRole('link', { name: 'e2e-box' }).waitFor();
  await page.screenshot({ path: `${SHOTS}sandboxes.png` });

  for (const [name, file] of [
    ['Templates', 'templates'],
    ['API keys', 'keys'],
    ['Team', 'team'],
    ['Billing', 'billing'],
  ]) {
    await page.getByRole('navigation').getByRole('link', { name }).click();
    await page.getByRole('heading', { name, exact: true }).waitFor();
    await page.waitForLoadState('networkidle').catch(() => undefined);
    await page.screenshot({ path: `${SHOTS}${file}.png`, fullPage: true });
  }

  // Team: add a member, then grant them a second role.
  await page.getByRole('navigation').getByRole('link', { name: 'Team' }).click();
  await page.getByLabel('Email').fill('e2e@example.test');
  await page.getByLabel('Full name').fill('E2E Member');
  await page.getByLabel('Role', { exact: true }).selectOption('member');
  await page.getByRole('button', { name: 'Add member' }).click();
  await page.getByText('Their first API key (shown once)').waitFor();
  await page.getByLabel('Grant a role to e2e@example.test').selectOption('billing_viewer');
  await page.getByRole('button', { name: 'Revoke billing_viewer from e2e@example.test' }).waitFor();

  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('button', { name: 'Menu' }).click();
  await page.getByRole('navigation').getByRole('link', { name: 'Sandboxes' }).click();
  await page.getByRole('link', { name: 'e2e-box' }).waitFor();
  await page.screenshot({ path: `${SHOTS}sandboxes-phone.png` });
  await page.setViewportSize({ width: 1366, height: 900 });
  assert.deepEqual(errors, []);
  watching = false;
});

test("changes: a sandbox's changed files listed under a path, a file's diff, another sandbox's changes applied", async () => {
  const api = new Api(server.url, server.key);
  const created = await Promise.all(['changes-a', 'changes-b'].map((name) => api.post('/sandboxes', { name })));
  const [a, b] = created.map((r) => {
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  });
  const run = async (id: string, command: string) => assert.equal((await api.post(`/sandboxes/${id}/exec`, { command })).body.exit_code, 0, command);
  await run(a!, 'mkdir -p /home/user/work && printf "one\\ntwo\\n" > /home/user/work/notes.txt && echo x > /home/user/elsewhere.txt');
  watching = true;
  await page.goto(url(`/sandboxes/${a}`));
  const changes = page.getByRole('region', { name: 'Changes' });
  await changes.locator('[data-path="/home/user/work/notes.txt"][data-kind="added"]').waitFor();
  await changes.getByLabel('Under path').fill('/home/user/work');
  await changes.getByLabel('Under path').press('Tab');
  await changes.locator('[data-path="/home/user/elsewhere.txt"]').waitFor({ state: 'detached' });
  await changes.getByRole('button', { name: '/home/user/work/notes.txt' }).click();
  const diff = changes.getByRole('figure', { name: 'Diff of /home/user/work/notes.txt' });
  assert.match(await diff.innerText(), /\+one\n\+two/);

  await page.goto(url(`/sandboxes/${b}`));
  const here = page.getByRole('region', { name: 'Changes' });
  await here.getByText('No changes').waitFor();
  await here.getByLabel('Apply the changes of sandbox').fill(a!);
  await here.getByRole('button', { name: 'Apply' }).click();
  await here
    .getByRole('status')
    .filter({ hasText: /Applied [1-9]\d*, conflicts 0/ })
    .waitFor();
  await here.locator('[data-path="/home/user/work/notes.txt"]').waitFor();
  assert.equal((await api.post(`/sandboxes/${b}/exec`, { command: 'cat /home/user/work/notes.txt' })).body.stdout, 'one\ntwo\n');
  assert.deepEqual(errors, []);
  watching = false;
  for (const id of [a, b]) await api.del(`/sandboxes/${id}`);
});

test('webhooks: add one, send a test, see it delivered; the audit log shows who did it', async () => {
  await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
  await page.getByLabel('Endpoint URL').fill(receiver.url);
  await page.getByLabel('Description (optional)').fill('e2e receiver');
  await page.getByRole('button', { name: 'Add webhook' }).click();
  await page.getByRole('status').filter({ hasText: 'Signing secret' }).locator('code').waitFor();
  const row = page.locator('tr[data-webhook]').filter({ hasText: receiver.url });
  await row.getByRole('button', { name: 'Send test' }).click();
  await row.getByRole('link', { name: receiver.url }).click();
  await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
  const delivered = page.locator('tr[data-delivery]').filter({ hasText: 'webhook.test' }).filter({ hasText: 'delivered' });
  await delivered.waitFor();
  assert.match(await delivered.innerText(), /HTTP 200/);
  // Other events (the previous test's deletions finishing) may arrive around the test delivery.
  assert.ok(receiver.received.some((r) => r.json.type === 'webhook.test'));
  await page.screenshot({ path: `${SHOTS}webhook-deliveries.png` });

  await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
  await page.getByRole('heading', { name: 'Audit log' }).waitFor();
  await page.locator('tr[data-action="webhook.create"]').first().waitFor();
  await page.locator('tr[data-action="sandbox.create"]').first().waitFor();
  await page.getByLabel('Action').fill('webhook.test');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.locator('tr[data-action="sandbox.create"]').first().waitFor({ state: 'detached' });
  assert.ok((await page.locator('tr[data-action]').count()) >= 1);
  assert.equal(await page.locator('tr[data-action]:not([data-action="webhook.test"])').count(), 0);
  await page.screenshot({ path: `${SHOTS}audit-log.png` });
});

test('volumes: create one, see it listed with its quota, grow it, delete it', async () => {
  await page.getByRole('navigation').getByRole('link', { name: 'Volumes' }).click();
  await page.getByRole('heading', { name: 'Volumes' }).waitFor();
  await page.getByLabel('Name').fill('console-data');
  await page.getByLabel('Size (MiB)').fill('64');
  await page.getByRole('button', { name: 'Create volume' }).click();
  const row = page.locator('tr[data-volume="console-data"]');
  await row.filter({ hasText: 'of 64 MiB' }).waitFor();
  page.once('dialog', (d) => void d.accept('128'));
  await row.getByRole('button', { name: 'Grow' }).click();
  await row.filter({ hasText: 'of 128 MiB' }).waitFor();
  const api = new Api(server.url, server.key);
  assert.equal((await api.get('/volumes/console-data')).body.size_mib, 128);
  await row.getByRole('button', { name: 'Delete' }).click();
  await row.waitFor({ state: 'detached' });
  assert.equal((await api.get('/volumes/console-data')).status, 404);
});

test('sign out ends the session', async () => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key').waitFor();
  const status = await page.evaluate(async () => (await fetch('/sandboxes')).status);
  assert.equal(status, 401);
  await page.reload();
  await page.getByLabel('API key').waitFor();
});

test('a key without billing:read sees no billing page', async () => {
  const made = await new Api(server.url, server.key).post('/api-keys', { name: 'no-billing', permissions: ['sandboxes:read', 'sandboxes:write'] });
  assert.equal(made.status, 201);
  await signIn(page, made.body.key);
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
  assert.equal(await page.getByRole('navigation').getByRole('link', { name: 'Billing' }).count(), 0);
  await page.goto(url('/billing'));
  await page.getByText('This API key has no billing:read permission.').waitFor();
  assert.equal(await page.getByRole('heading', { name: 'Billing' }).count(), 0);
});
