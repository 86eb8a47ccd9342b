import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { SandpitClient, verifyWebhook } from '../src/index.ts';
import { json, scriptedServer } from './helpers/scripted-server.ts';

describe('webhooks and the audit log', () => {
  it('verifyWebhook accepts the server recipe and refuses another secret, a changed body or an old timestamp', async () => {
    const body = '{"id":"evt_sb_1","type":"sandbox.created"}';
    const t = 1_800_000_000;
    const header = `t=${t},v1=${createHmac('sha256', 'whsec_a').update(`${t}.${body}`).digest('hex')}`;
    assert.equal(await verifyWebhook('whsec_a', header, body, 300, t + 10), true);
    assert.equal(await verifyWebhook('whsec_b', header, body, 300, t), false);
    assert.equal(await verifyWebhook('whsec_a', header, `${body} `, 300, t), false);
    assert.equal(await verifyWebhook('whsec_a', header, body, 300, t + 301), false);
    assert.equal(await verifyWebhook('whsec_a', 'garbage', body, 300, t), false);
  });

  it('pages deliveries and audit entries with their filters', async (t) => {
    const srv = await scriptedServer((req, res, n) => {
      const url = new URL(req.url ?? '', 'http://x');
      if (url.pathname.endsWith('/deliveries')) return json(res, 200, { deliveries: [{ id: `d${n}` }], ...(url.searchParams.get('cursor') ? {} : { next_cursor: 'c2' }) });
      return json(res, 200, { entries: [{ id: 'a1' }] });
    });
    t.after(() => srv.close());
    const client = new SandpitClient({ apiUrl: srv.url, apiKey: 'sp_k' });
    const pages: unknown[] = [];
    for await (const page of client.webhooks.deliveries('w1', { status: 'failed' })) pages.push(page);
    assert.equal(pages.length, 2);
    for await (const page of client.auditLog.list({ action: 'sandbox.create', since: new Date(0), resourceType: 'sandbox' })) pages.push(page);
    assert.equal(srv.seen[0]?.url, '/webhooks/w1/deliveries?status=failed');
    assert.equal(srv.seen[1]?.url, '/webhooks/w1/deliveries?status=failed&cursor=c2');
    assert.equal(srv.seen[2]?.url, '/audit-log?action=sandbox.create&resource_type=sandbox&since=1970-01-01T00%3A00%3A00.000Z');
  });
});
