import type { MetricPoint, SandboxMetrics } from '../sdk-types.ts';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { get } from '../api.ts';
import { ErrorText } from '../ui.tsx';

const MIB = 1024 * 1024;

interface ChartSpec {
  title: string;
  series: { label: string; color: string; value: (p: MetricPoint) => number | null }[];
}

const CHARTS: ChartSpec[] = [
  { title: 'CPU (%)', series: [{ label: 'CPU %', color: '#2563eb', value: (p) => p.cpu_percent }] },
  {
    title: 'Memory and disk (MiB)',
    series: [
      { label: 'memory', color: '#16a34a', value: (p) => p.memory_bytes / MIB },
      { label: 'disk', color: '#a16207', value: (p) => p.disk_bytes / MIB },
    ],
  },
  {
    title: 'Network (KiB/s)',
    series: [
      { label: 'received', color: '#7c3aed', value: (p) => (p.net_rx_rate === null ? null : p.net_rx_rate / 1024) },
      { label: 'sent', color: '#db2777', value: (p) => (p.net_tx_rate === null ? null : p.net_tx_rate / 1024) },
    ],
  },
];

function Chart({ spec, points }: { spec: ChartSpec; points: MetricPoint[] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = (): uPlot.AlignedData => [points.map((p) => Date.parse(p.at) / 1000), ...spec.series.map((s) => points.map(s.value))];
  useEffect(() => {
    const el = box.current!;
    plot.current = new uPlot(
      {
        width: el.clientWidth || 300,
        height: 150,
        legend: { show: true },
        series: [{}, ...spec.series.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: true, size: 4 } }))],
        axes: [{}, { size: 50 }],
      },
      data(),
      el,
    );
    const ro = new ResizeObserver(() => plot.current?.setSize({ width: el.clientWidth, height: 150 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
    };
  }, []);
  useEffect(() => plot.current?.setData(data()), [points]);
  return (
    <figure class="chart">
      <figcaption>{spec.title}</figcaption>
      <div ref={box} data-points={points.length} role="img" aria-label={`${spec.title}: ${points.length} points`} />
    </figure>
  );
}

/** Polls the sandbox's metric series (only newer points after the first read) and draws it. */
export default function MetricsCharts({ id }: { id: string }) {
  const [points, setPoints] = useState<MetricPoint[]>([]);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    let last: string | undefined;
    let all: MetricPoint[] = [];
    let timer: ReturnType<typeof setTimeout>;
    let stopped = false;
    const tick = async () => {
      let every = 5000;
      try {
        const m = await get<SandboxMetrics>(`/sandboxes/${id}/metrics${last ? `?since=${encodeURIComponent(last)}` : ''}`);
        every = Math.max(1000, m.interval_ms);
        const fresh = m.points.filter((p) => !last || p.at > last);
        if (fresh.length) {
          const cut = Date.now() - m.window_ms;
          all = [...all, ...fresh].filter((p) => Date.parse(p.at) >= cut);
          last = fresh[fresh.length - 1]!.at;
          setPoints(all);
        }
        setError(undefined);
      } catch (err) {
        setError((err as Error).message);
      }
      if (!stopped) timer = setTimeout(tick, every);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id]);
  return (
    <div class="charts">
      <ErrorText error={error} />
      {points.length === 0 && <p class="hint">No samples yet (active sandboxes are sampled every few seconds).</p>}
      {CHARTS.map((c) => (
        <Chart key={c.title} spec={c} points={points} />
      ))}
    </div>
  );
}
