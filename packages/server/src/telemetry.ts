import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, ValueType } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationTemporality, type CollectionResult, DataPointType, MeterProvider, type MetricData, type MetricProducer, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, type Sampler, TraceIdRatioBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Registry } from 'prom-client';
import type { OtelSettings } from './config.ts';
import { VERSION } from './routes/info.ts';
import { enableTracing } from './tracing.ts';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The OpenTelemetry SDK of a platform: traces and metrics exported over OTLP/HTTP (protobuf). */
export interface Telemetry {
  /** A server's request handler running every request in its server span's context. */
  traced: (handler: RequestHandler) => RequestHandler;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Starts the SDK when an OTLP endpoint is configured; undefined (and tracing off) otherwise. */
export function startTelemetry(settings: OtelSettings, registry: Registry): Telemetry | undefined {
  enableTracing(settings.endpoint !== undefined);
  if (settings.endpoint === undefined) return undefined;
  const base = settings.endpoint.replace(/\/+$/, '');
  const resource = resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': VERSION });
  const traces = new TracerProvider({
    resource,
    sampler: samplerOf(settings.sampler),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${base}/v1/traces` }), scheduledDelayMillis: 1000 })],
  });
  trace.setGlobalTracerProvider(traces);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const reader = new PeriodicExportingMetricReader({
    exporter: new OTLPMetricExporter({ url: `${base}/v1/metrics` }),
    exportIntervalMillis: settings.metricIntervalMs,
    exportTimeoutMillis: Math.min(settings.metricIntervalMs, 30_000),
    metricProducers: [prometheusProducer(registry)],
  });
  const meters = new MeterProvider({ resource, readers: [reader] });
  const tracer = traces.getTracer('sandpit');

  return {
    traced: (handler) => (req, res) => {
      // A caller's traceparent continues its trace; the span is named for the route once Fastify knows it.
      // Attributes are set only on a recorded span: given to startSpan, every request would pay for their checks, sampled or not.
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const span = tracer.startSpan(req.method ?? 'HTTP', { kind: SpanKind.SERVER }, parent);
      if (span.isRecording()) {
        span.setAttributes({ 'http.request.method': req.method ?? '', 'url.path': (req.url ?? '').split('?')[0]! });
        res.once('close', () => {
          span.setAttribute('http.response.status_code', res.statusCode);
          if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        });
      }
      context.with(trace.setSpan(parent, span), () => handler(req, res));
    },
    async flush() {
      await Promise.all([traces.forceFlush(), meters.forceFlush()]);
    },
    async shutdown() {
      enableTracing(false);
      await Promise.all([traces.shutdown(), meters.shutdown()]).catch(() => undefined);
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The standard OTEL_TRACES_SAMPLER names. */
function samplerOf({ name, ratio }: OtelSettings['sampler']): Sampler {
  const root = name.endsWith('always_off') ? new AlwaysOffSampler() : name.endsWith('traceidratio') ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler();
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/** The metrics GET /metrics serves, read from the Prometheus registry at each export and sent as OTLP metrics. */
function prometheusProducer(registry: Registry): MetricProducer {
  const t0 = Date.now();
  const startTime: [number, number] = [Math.floor(t0 / 1000), (t0 % 1000) * 1e6];
  return {
    async collect(): Promise<CollectionResult> {
      const now = Date.now();
      const endTime: [number, number] = [Math.floor(now / 1000), (now % 1000) * 1e6];
      const metrics: MetricData[] = [];
      for (const m of await registry.getMetricsAsJSON()) {
        // The typings say a numeric enum; the values are the Prometheus type names.
        const type = m.type as unknown as string;
        const descriptor = { name: m.name, description: m.help, unit: '', valueType: ValueType.DOUBLE };
        const point = <T>(attributes: Record<string, string | number>, value: T) => ({
          startTime,
          endTime,
          attributes: Object.fromEntries(Object.entries(attributes).map(([k, v]) => [k, String(v)])),
          value,
        });
        if (type === 'counter' || type === 'gauge') {
          const dataPoints = m.values.map((v) => point(v.labels as Record<string, string | number>, v.value));
          metrics.push(
            type === 'counter'
              ? { descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.SUM, isMonotonic: true, dataPoints }
              : { descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.GAUGE, dataPoints },
          );
        } else if (type === 'histogram') {
          // Prometheus buckets are cumulative (le); OTLP's count each bucket on its own.
          const series = new Map<string, { labels: Record<string, string | number>; le: [number, number][]; sum: number; count: number }>();
          for (const v of m.values) {
            const { le, ...labels } = v.labels as Record<string, string | number>;
            const key = JSON.stringify(labels);
            let s = series.get(key);
            if (!s) series.set(key, (s = { labels, le: [], sum: 0, count: 0 }));
            const name = (v as { metricName?: string }).metricName ?? '';
            if (name.endsWith('_bucket') && le !== '+Inf') s.le.push([Number(le), v.value]);
            else if (name.endsWith('_sum')) s.sum = v.value;
            else if (name.endsWith('_count')) s.count = v.value;
          }
          const dataPoints = [...series.values()].map((s) => {
            s.le.sort((a, b) => a[0] - b[0]);
            const counts = s.le.map(([, c], i) => c - (i > 0 ? s.le[i - 1]![1] : 0));
            counts.push(s.count - (s.le.length > 0 ? s.le[s.le.length - 1]![1] : 0));
            return point(s.labels, { buckets: { boundaries: s.le.map(([b]) => b), counts }, sum: s.sum, count: s.count });
          });
          metrics.push({ descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.HISTOGRAM, dataPoints });
        }
      }
      return { resourceMetrics: { resource: resourceFromAttributes({}), scopeMetrics: [{ scope: { name: 'sandpit.prometheus' }, metrics }] }, errors: [] };
    },
  };
}
