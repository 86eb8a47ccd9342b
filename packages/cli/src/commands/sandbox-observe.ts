import type { MetricPoint } from '../sdk.ts';
import { type ApiOptions, apiCommand, connect, integer, printJson, printTable, run } from '../api.ts';

const MIB = 1024 * 1024;
const mib = (bytes: number | null) => (bytes === null ? '-' : (bytes / MIB).toFixed(1));
const rate = (bytesPerS: number | null) => (bytesPerS === null ? '-' : `${(bytesPerS / 1024).toFixed(1)}`);

interface MetricsOptions extends ApiOptions {
  last?: number;
}

/** `sandpit sandbox metrics <id>`: the sampled series, newest last. */
export function metricsCommand() {
  return apiCommand('metrics', 'CPU, memory, disk and network use over time (sampled by the server)')
    .argument('<id>', 'sandbox id')
    .option('--last <n>', 'only the last n points', integer)
    .action(
      run(async (id: string, opts: MetricsOptions) => {
        const m = await connect(opts).sandboxes.metrics(id);
        const points = opts.last === undefined ? m.points : m.points.slice(-opts.last);
        if (opts.json) return printJson({ ...m, points });
        printTable(
          ['at', 'cpu %', 'memory MiB', 'disk MiB', 'rx KiB/s', 'tx KiB/s'],
          points.map((p: MetricPoint) => [p.at, p.cpu_percent === null ? '-' : String(p.cpu_percent), mib(p.memory_bytes), mib(p.disk_bytes), rate(p.net_rx_rate), rate(p.net_tx_rate)]),
        );
      }),
    );
}

/** `sandpit sandbox events <id>`: the lifecycle log with reasons. */
export function eventsCommand() {
  return apiCommand('events', 'lifecycle events with reasons (created, paused, resumed, snapshot, failed...)')
    .argument('<id>', 'sandbox id')
    .action(
      run(async (id: string, opts: ApiOptions) => {
        const events = await connect(opts).sandboxes.events(id, { limit: 1000 });
        if (opts.json) return printJson(events);
        printTable(
          ['at', 'event', 'reason'],
          events.map((e) => [e.at, e.type, e.reason]),
        );
      }),
    );
}
