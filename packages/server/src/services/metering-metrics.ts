import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { RuntimeDriver } from '../runtime/driver.ts';
import { SANDBOX_STATUSES } from '../schemas/sandbox.ts';
import type { MeterStore } from '../store/billing.ts';
import { tracingEnabled } from '../tracing.ts';

/** Prometheus metrics of one platform instance, in its own registry. */
export class PlatformMetrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly engineDuration: Histogram<'operation' | 'outcome'>;

  constructor(store: MeterStore) {
    collectDefaultMetrics({ register: this.registry, prefix: 'sandpit_process_' });
    this.httpDuration = new Histogram({
      name: 'sandpit_http_request_duration_seconds',
      help: 'API request latency, by route pattern',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    this.engineDuration = new Histogram({
      name: 'sandpit_engine_operation_duration_seconds',
      help: 'Runtime engine operation latency (create, pause, resume, destroy, ...)',
      labelNames: ['operation', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
    new Gauge({
      name: 'sandpit_sandboxes',
      help: 'Sandboxes that are not deleted, by status',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        const counts = await store.sandboxesByStatus();
        // Every status is reported, zeros included, so dashboards see a series per status.
        for (const s of new Set([...SANDBOX_STATUSES, ...counts.keys()])) this.set({ status: s }, counts.get(s) ?? 0);
      },
    });
  }
}

/**
 * The driver with every asynchronous operation timed into `engineDuration`, and, within a trace
 * (tracing on, a request being served), an `engine.<operation>` span; everything else passes through.
 */
export function instrumentDriver(driver: RuntimeDriver, metrics: PlatformMetrics): RuntimeDriver {
  return new Proxy(driver, {
    get(target, prop) {
      // The target as receiver: getters and methods may use the driver's private fields.
      const value = Reflect.get(target, prop, target);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]) => {
        const started = performance.now();
        const span = tracingEnabled() && trace.getActiveSpan() ? trace.getTracer('sandpit').startSpan(`engine.${prop}`) : undefined;
        const result: unknown = value.apply(target, args);
        if (!(result instanceof Promise)) {
          span?.end();
          return result;
        }
        const observe = (outcome: string) => metrics.engineDuration.observe({ operation: prop, outcome }, (performance.now() - started) / 1000);
        return result.then(
          (v) => {
            observe('ok');
            span?.end();
            return v;
          },
          (err) => {
            observe('error');
            span?.setStatus({ code: SpanStatusCode.ERROR, message: String((err as Error).message) });
            span?.end();
            throw err;
          },
        );
      };
    },
  });
}
