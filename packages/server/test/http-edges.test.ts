import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Api, ServerProcess } from './helpers/server-process.ts';

// Requests a user's tools send that the routes' own schemas never see: optional bodies left out,
// and malformed requests the framework or Node's HTTP parser answers before any route runs.
let server: ServerProcess;
let api: Api;

before(async () => {
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_RATE_LIMIT: '0' });
  api = new Api(server.url, server.key);
});
after(async () => {
  await server?.stop();
});

/** Sends raw bytes and returns the status and parsed body of the answer. */
async function raw(request: string): Promise<{ status: number; body: any }> {
  const text = await new Promise<string>((resolve, reject) => {
    const sock = connect(server.port, '127.0.0.1', () => sock.end(request));
    let out = '';
    sock.on('data', (d) => (out += d));
    // The server closes on a request it rejected; unread bytes of ours may turn that into a reset.
    sock.on('error', (err) => (out ? resolve(out) : reject(err)));
    sock.on('close', () => resolve(out));
  });
  const split = text.indexOf('\r\n\r\n');
  return { status: Number(text.split(' ')[1]), body: JSON.parse(text.slice(split + 4)) };
}

function assertEnvelope(res: { status: number; body: any }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body), ['error'], JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  assert.equal(typeof res.body.error.message, 'string');
}

/** A body schema that requires a field, itself or in every variant of a union (an action of several kinds). */
const needsField = (schema: any): boolean => {
  const variants: any[] = schema.anyOf ?? schema.oneOf ?? [];
  return (schema.required ?? []).length > 0 || (variants.length > 0 && variants.every(needsField));
};

describe('optional bodies', () => {
  test('POST snapshot with no body, with or without a JSON content type, reaches the route', async () => {
    const missing = '/sandboxes/sb-local-00000000-0000-4000-8000-000000000000/snapshot';
    assertEnvelope(await api.req('POST', missing), 404, 'not_found');
    assertEnvelope(await api.req('POST', missing, undefined, { 'content-type': 'application/json' }), 404, 'not_found');
  });

  test('every POST whose body has no required field accepts none', async () => {
    const doc = (await api.get('/openapi.json')).body;
    const checked: string[] = [];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      const body = ops.post?.requestBody?.content?.['application/json']?.schema;
      if (!body || needsField(body) || !path.includes('{')) continue;
      const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      for (const headers of [{}, { 'content-type': 'application/json' }] as Record<string, string>[]) {
        const res = await api.req('POST', url, undefined, headers);
        assert.notEqual(res.body?.error?.code, 'bad_request', `${path} ${JSON.stringify(headers)}: ${JSON.stringify(res.body)}`);
      }
      checked.push(path);
    }
    assert.ok(checked.includes('/sandboxes/{sandbox_id}/snapshot'), checked.join(' '));
  });

  test('POST /sandboxes with a JSON content type and no body creates a default sandbox', async () => {
    const res = await api.req('POST', '/sandboxes', undefined, { 'content-type': 'application/json' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal((await api.del(`/sandboxes/${res.body.id}`)).status, 204);
  });
});

describe('framework-made 4xx answers use the envelope', () => {
  test('bad percent-encoding in the path', async () => {
    assertEnvelope(await api.post('/sandboxes/%/exec', { command: 'true' }), 400, 'bad_request');
    assertEnvelope(await api.get('/sandboxes/%zz'), 400, 'bad_request');
  });

  test('an over-long path parameter', async () => {
    assertEnvelope(await api.get(`/sandboxes/${'a'.repeat(300)}`), 414, 'uri_too_long');
  });

  test('unsupported media type and bad JSON', async () => {
    assertEnvelope(await api.post('/sandboxes', '<a/>', { 'content-type': 'text/xml' }), 415, 'unsupported_media_type');
    assertEnvelope(await api.post('/sandboxes', '{bad'), 400, 'bad_request');
  });

  test('a body too large is answered 413 every time, never cut off while the client still writes it', async () => {
    // Closing the connection under a client still sending failed about one request in four with EPIPE.
    const body = `{"name":"${'x'.repeat(3 * 1024 * 1024)}"}`;
    for (let i = 0; i < 30; i++) assertEnvelope(await api.post('/sandboxes', body), 413, 'payload_too_large');
    assert.equal((await api.get('/sandboxes')).status, 200);
  });

  test('requests the HTTP parser rejects', async () => {
    assertEnvelope(await raw(`GET /info HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`), 431, 'header_fields_too_large');
    assertEnvelope(await raw('POST /sandboxes HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}'), 400, 'bad_request');
    assertEnvelope(await raw('NOT A REQUEST\r\n\r\n'), 400, 'bad_request');
  });
});
