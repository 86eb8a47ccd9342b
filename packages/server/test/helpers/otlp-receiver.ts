import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * An OTLP/HTTP receiver (what an OpenTelemetry Collector's otlp receiver does on :4318), decoding
 * requests with the OTLP protobuf definitions as compiled by OpenTelemetry
 * (@opentelemetry/otlp-transformer 0.203's generated protobufjs module). Neither Debian nor npm
 * carries a Collector that runs here.
 */
const require = createRequire(import.meta.url);
let dir = dirname(require.resolve('@opentelemetry/otlp-transformer'));
while (!dir.endsWith('otlp-transformer')) dir = dirname(dir);
const proto = require(join(dir, 'build/src/generated/root.js')).opentelemetry.proto;
const TraceRequest = proto.collector.trace.v1.ExportTraceServiceRequest;
const TraceResponse = proto.collector.trace.v1.ExportTraceServiceResponse;
const MetricsRequest = proto.collector.metrics.v1.ExportMetricsServiceRequest;
const MetricsResponse = proto.collector.metrics.v1.ExportMetricsServiceResponse;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  service: string;
}

export interface ReceivedMetric {
  name: string;
  kind: string;
  points: any[];
  service: string;
}

const hex = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString('hex');
const value = (v: any): unknown => v?.stringValue ?? v?.intValue ?? v?.doubleValue ?? v?.boolValue;
const attrs = (list: any[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly metrics: ReceivedMetric[] = [];
  readonly contentTypes = new Set<string>();
  readonly #server: Server;

  private constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.contentTypes.add(String(req.headers['content-type']));
        const body = Buffer.concat(chunks);
        if (req.url === '/v1/traces') {
          const msg = TraceRequest.toObject(TraceRequest.decode(body), { enums: Number, longs: String, defaults: true });
          for (const rs of msg.resourceSpans) {
            const service = String(attrs(rs.resource?.attributes)['service.name']);
            for (const ss of rs.scopeSpans) {
              for (const s of ss.spans) {
                this.spans.push({
                  traceId: hex(s.traceId),
                  spanId: hex(s.spanId),
                  parentSpanId: hex(s.parentSpanId),
                  name: s.name,
                  kind: s.kind,
                  attributes: attrs(s.attributes),
                  status: s.status ?? {},
                  service,
                });
              }
            }
          }
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from(TraceResponse.encode({}).finish()));
        } else if (req.url === '/v1/metrics') {
          const msg = MetricsRequest.toObject(MetricsRequest.decode(body), { longs: String, defaults: false });
          for (const rm of msg.resourceMetrics) {
            const service = String(attrs(rm.resource?.attributes)['service.name']);
            for (const sm of rm.scopeMetrics ?? []) {
              for (const m of sm.metrics ?? []) {
                const kind = m.sum ? 'sum' : m.gauge ? 'gauge' : m.histogram ? 'histogram' : 'other';
                this.metrics.push({ name: m.name, kind, points: (m.sum ?? m.gauge ?? m.histogram)?.dataPoints ?? [], service });
              }
            }
          }
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from(MetricsResponse.encode({}).finish()));
        } else {
          res.writeHead(404).end();
        }
      });
    });
  }

  static async start(): Promise<OtlpReceiver> {
    const r = new OtlpReceiver();
    await new Promise<void>((resolve) => r.#server.listen(0, '127.0.0.1', resolve));
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
