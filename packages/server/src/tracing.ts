import { type Attributes, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * Spans of the platform's own work (a request, the network set-up, an engine call, an agent call),
 * through the OpenTelemetry API. Off (no OTEL_EXPORTER_OTLP_ENDPOINT), `inSpan` is a plain call:
 * not even the API's no-op tracer is asked.
 */
let enabled = false;

export function enableTracing(on: boolean): void {
  enabled = on;
}

export const tracingEnabled = () => enabled;

const tracer = () => trace.getTracer('sandpit');

/** Runs `fn` in a child span of the active one; an error marks the span and passes through. */
export function inSpan<T>(name: string, fn: () => Promise<T>, attributes?: Attributes): Promise<T> {
  if (!enabled) return fn();
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The trace of the work in progress, for log lines and error responses. */
export function activeTraceId(): string | undefined {
  if (!enabled) return undefined;
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && trace.isSpanContextValid(ctx) ? ctx.traceId : undefined;
}
