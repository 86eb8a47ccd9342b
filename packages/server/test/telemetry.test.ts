import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { FakePlatform } from './helpers/fake-platform.ts';
import { OtlpReceiver } from './helpers/otlp-receiver.ts';
import type { Api } from './helpers/server-process.ts';
import { until } from './helpers/webhook-receiver.ts';

// OpenTelemetry over OTLP/HTTP (protobuf) to a receiver decoding the official OTLP definitions.
let otlp: OtlpReceiver;
let f: FakePlatform;
let api: Api;
const lines: any[] = [];

before(async () => {
  otlp = await OtlpReceiver.start();
  const logDestination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  f = await FakePlatform.start({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: 'sandpit-test', OTEL_METRIC_EXPORT_INTERVAL: '300', SANDPIT_LOG_LEVEL: 'info' },
    options: { logDestination },
  });
  api = f.api();
});

after(async () => {
  await f?.destroy();
  await otlp?.close();
});

const trace = (id: string) => otlp.spans.filter((s) => s.traceId === id);

test('a create is one trace: the request span, and under it the network set-up, the engine start and the first contact with the agent', async () => {
  const res = await api.post('/sandboxes', {});
  assert.equal(res.status, 201);
  await f.p.telemetry!.flush();
  const server = await until(() => otlp.spans.find((s) => s.name === 'POST /sandboxes'), 10_000, 'the request span');
  assert.equal(server.service, 'sandpit-test');
  assert.equal(server.kind, 2, 'SPAN_KIND_SERVER');
  assert.equal(server.parentSpanId, '');
  assert.equal(server.attributes['http.route'], '/sandboxes');
  assert.equal(Number(server.attributes['http.response.status_code']), 201);
  const spans = trace(server.traceId);
  const byName = (n: string) => {
    const s = spans.find((x) => x.name === n);
    assert.ok(s, `${n} in ${spans.map((x) => x.name)}`);
    return s;
  };
  const start = byName('sandbox.start');
  assert.equal(byName('sandbox.network_setup').parentSpanId, server.spanId);
  assert.equal(start.parentSpanId, server.spanId);
  assert.equal(byName('engine.create').parentSpanId, start.spanId);
  assert.equal(byName('sandbox.boot').parentSpanId, start.spanId);
  byName('agent.connect');
  await api.del(`/sandboxes/${res.body.id}`);
});

test('an error answers with its trace id, and the log lines of the request carry it', async () => {
  f.engine.failNext('create', new Error('engine exploded'), 'missing');
  const res = await api.post('/sandboxes', {});
  assert.equal(res.status, 500);
  const traceId = res.headers.get('x-trace-id');
  assert.match(String(traceId), /^[0-9a-f]{32}$/);
  const logged = lines.find((l) => l.msg === 'request failed');
  assert.ok(logged, JSON.stringify(lines));
  assert.equal(logged.trace_id, traceId);
  await f.p.telemetry!.flush();
  const server = await until(() => trace(traceId!).find((s) => s.name === 'POST /sandboxes'), 10_000, 'the failed request span');
  assert.equal(server.status.code, 2, 'STATUS_CODE_ERROR');
  assert.equal(trace(traceId!).find((s) => s.name === 'engine.create')?.status.code, 2);
  // The audit entry names the trace too.
  const entry = (await api.get('/audit-log?action=sandbox.create&limit=1')).body.entries[0];
  assert.equal(entry.trace_id, traceId);
  // A success carries no header; a 404 does.
  assert.equal((await api.get('/sandboxes')).headers.get('x-trace-id'), null);
  assert.match(String((await api.get('/sandboxes/sb-local-00000000-0000-4000-8000-000000000000')).headers.get('x-trace-id')), /^[0-9a-f]{32}$/);
});

test("a caller's traceparent continues its trace; exec has an agent span", async () => {
  const sb = (await api.post('/sandboxes', {})).body.id;
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const parent = '00f067aa0ba902b7';
  await api.post(`/sandboxes/${sb}/exec`, { command: 'true' }, { traceparent: `00-${traceId}-${parent}-01` });
  await f.p.telemetry!.flush();
  const server = await until(() => trace(traceId).find((s) => s.name === 'POST /sandboxes/:sandbox_id/exec'), 10_000, 'the exec span');
  assert.equal(server.parentSpanId, parent);
  const exec = trace(traceId).find((s) => s.name === 'agent.exec');
  assert.equal(exec?.parentSpanId, server.spanId);
  await api.del(`/sandboxes/${sb}`);
});

test('the metrics of /metrics are exported over OTLP too', async () => {
  await api.get('/sandboxes');
  const http = await until(() => otlp.metrics.find((m) => m.name === 'sandpit_http_request_duration_seconds' && m.points.length > 0), 10_000, 'the request histogram');
  assert.equal(http.kind, 'histogram');
  const p = http.points.find((x) => x.attributes.some((a: any) => a.key === 'route' && a.value.stringValue === '/sandboxes'));
  assert.ok(p, JSON.stringify(http.points[0]));
  assert.ok(Number(p.count) >= 1);
  assert.equal(p.bucketCounts.length, p.explicitBounds.length + 1);
  assert.equal(
    p.bucketCounts.reduce((a: number, b: string) => a + Number(b), 0),
    Number(p.count),
  );
  const sandboxes = await until(() => otlp.metrics.find((m) => m.name === 'sandpit_sandboxes'), 10_000, 'the sandboxes gauge');
  assert.equal(sandboxes.kind, 'gauge');
  assert.ok(otlp.metrics.some((m) => m.name.startsWith('sandpit_process_')));
  assert.ok([...otlp.contentTypes].every((c) => c === 'application/x-protobuf'));
});

test('off unless configured: no export, no header', async () => {
  await f.close();
  const quiet = await FakePlatform.start();
  try {
    const before = otlp.spans.length;
    const res = await quiet.api().get('/sandboxes/sb-local-00000000-0000-4000-8000-000000000000');
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('x-trace-id'), null);
    assert.equal(quiet.p.telemetry, undefined);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(otlp.spans.length, before);
  } finally {
    await quiet.destroy();
  }
});

test('a request the sampler drops still has a trace id (header, log line) and sends no span; a sampled caller is still followed', async () => {
  const logged: any[] = [];
  const logDestination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) logged.push(JSON.parse(l));
      done();
    },
  });
  const dropping = await FakePlatform.start({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_TRACES_SAMPLER: 'parentbased_always_off', SANDPIT_LOG_LEVEL: 'info' },
    options: { logDestination },
  });
  try {
    const before = otlp.spans.length;
    const res = await dropping.api().get('/sandboxes/sb-local-00000000-0000-4000-8000-000000000001');
    assert.equal(res.status, 404);
    const traceId = String(res.headers.get('x-trace-id'));
    assert.match(traceId, /^[0-9a-f]{32}$/);
    dropping.engine.failNext('create', new Error('engine exploded'), 'missing');
    const failed = await dropping.api().post('/sandboxes', {});
    assert.equal(failed.status, 500);
    assert.equal(logged.find((l) => l.msg === 'request failed')?.trace_id, failed.headers.get('x-trace-id'));
    const created = await dropping.api().post('/sandboxes', {});
    assert.equal(created.status, 201);
    // The parent-based sampler follows a caller that sampled its own trace.
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4737';
    const followed = await fetch(`${dropping.p.url}/sandboxes/${created.body.id}`, { headers: { 'x-api-key': dropping.key, traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` } });
    assert.equal(followed.status, 200);
    await dropping.p.telemetry!.flush();
    const server = await until(() => otlp.spans.find((s) => s.traceId === callerTrace), 10_000, 'the followed request span');
    assert.equal(server.attributes['http.route'], '/sandboxes/:sandbox_id');
    assert.equal(Number(server.attributes['http.response.status_code']), 200);
    assert.equal(server.attributes['http.request.method'], 'GET');
    assert.deepEqual(
      otlp.spans.slice(before).filter((s) => s.traceId !== callerTrace),
      [],
      'nothing of the dropped requests is exported',
    );
    await dropping.api().del(`/sandboxes/${created.body.id}`);
  } finally {
    await dropping.destroy();
  }
});

test('the standard sampler settings are read, and a bad one is refused with its name', () => {
  assert.deepEqual(loadConfig({}).otel.sampler, { name: 'parentbased_always_on', ratio: 1 });
  assert.deepEqual(loadConfig({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }).otel.sampler, { name: 'parentbased_traceidratio', ratio: 0.1 });
  assert.throws(() => loadConfig({ OTEL_TRACES_SAMPLER: 'sometimes' }), /OTEL_TRACES_SAMPLER must be one of/);
  assert.throws(() => loadConfig({ OTEL_TRACES_SAMPLER_ARG: '2' }), /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/);
});
