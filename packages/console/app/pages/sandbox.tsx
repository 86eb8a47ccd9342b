import type { SandboxInfo, SandboxWithToken, Snapshot } from '../sdk-types.ts';
import { lazy, Suspense } from 'preact/compat';
import { useState } from 'preact/hooks';
import { del, get, post, rememberToken, when } from '../api.ts';
import { ChangesPanel } from '../parts/changes.tsx';
import { DesktopPanel } from '../parts/desktop.tsx';
import { EventsPanel } from '../parts/events.tsx';
import { ExecPanel } from '../parts/exec.tsx';
import { FilesPanel } from '../parts/files.tsx';
import { PreviewsPanel } from '../parts/previews.tsx';
import { navigate } from '../router.ts';
import { ErrorText, Section, Status, useAction, usePoll } from '../ui.tsx';

// The heavy parts (xterm.js, uPlot) load only on this page.
const MetricsCharts = lazy(() => import('../parts/metrics-charts.tsx'));
const TerminalPanel = lazy(() => import('../parts/terminal.tsx'));

async function waitReady(snapshot: Snapshot): Promise<Snapshot> {
  let s = snapshot;
  while (s.status !== 'ready') {
    if (s.status === 'failed') throw new Error('the snapshot failed');
    await new Promise((r) => setTimeout(r, 1000));
    s = await get<Snapshot>(`/snapshots/${s.id}`);
  }
  return s;
}

export function SandboxPage({ id }: { id: string }) {
  const sb = usePoll(() => get<SandboxInfo>(`/sandboxes/${id}`), [id], 2000);
  const { busy, error, run } = useAction();
  const [terminalOpen, setTerminalOpen] = useState(false);
  const s = sb.data;
  const act = (fn: () => Promise<unknown>) =>
    run(async () => {
      await fn();
      await sb.reload();
    });
  const lifecycle = (verb: 'pause' | 'resume') =>
    act(async () => {
      const res = await post<SandboxInfo | SandboxWithToken>(`/sandboxes/${id}/${verb}`);
      if ('access_token' in res) rememberToken(id, res.access_token);
      sb.setData(res);
    });
  const snapshot = () => act(async () => waitReady(await post<Snapshot>(`/sandboxes/${id}/snapshot`, {})));
  const fork = () =>
    act(async () => {
      const snap = await waitReady(await post<Snapshot>(`/sandboxes/${id}/snapshot`, {}));
      const child = await post<SandboxWithToken>('/sandboxes', { from_snapshot: snap.id });
      rememberToken(child.id, child.access_token);
      navigate(`/sandboxes/${child.id}`);
    });
  const remove = () =>
    run(async () => {
      if (!confirm(`Delete ${id} and everything in it?`)) return;
      await del(`/sandboxes/${id}`);
      navigate('/sandboxes');
    });
  if (!s) return sb.error ? <ErrorText error={sb.error} /> : <p>Loading…</p>;
  const active = s.status === 'active';
  return (
    <>
      <div class="page-head">
        <div>
          <h1>{s.name || s.id}</h1>
          <p class="sub">
            {s.id} · {s.template_id} · {s.resources.vcpu_count} vCPU, {s.resources.memory_mib} MiB · created {when(s.created_at)}
          </p>
        </div>
        <div class="actions" role="toolbar" aria-label="Sandbox actions">
          <span aria-live="polite">
            Status: <Status status={s.status} />
          </span>
          {active ? (
            <button type="button" disabled={busy} onClick={() => lifecycle('pause')}>
              Pause
            </button>
          ) : (
            <button type="button" disabled={busy || s.status !== 'paused'} onClick={() => lifecycle('resume')}>
              Resume
            </button>
          )}
          <button type="button" disabled={busy || s.status === 'failed'} onClick={snapshot}>
            Snapshot
          </button>
          <button type="button" disabled={busy || s.status === 'failed'} onClick={fork}>
            Fork
          </button>
          <button type="button" class="danger" disabled={busy} onClick={remove}>
            Delete
          </button>
        </div>
      </div>
      <ErrorText error={error} />
      <div class="grid">
        <Section title="Metrics">
          <Suspense fallback={<p>Loading charts…</p>}>
            <MetricsCharts id={id} />
          </Suspense>
        </Section>
        <Section title="Events">
          <EventsPanel id={id} status={s.status} />
        </Section>
      </div>
      <Section
        title="Terminal"
        actions={
          !terminalOpen && (
            <button type="button" disabled={!active} onClick={() => setTerminalOpen(true)}>
              Open terminal
            </button>
          )
        }
      >
        {terminalOpen ? (
          <Suspense fallback={<p>Loading terminal…</p>}>
            <TerminalPanel id={id} />
          </Suspense>
        ) : (
          <p class="hint">{active ? 'A shell in the sandbox, as user.' : 'Resume the sandbox to open a terminal.'}</p>
        )}
      </Section>
      <div class="grid">
        <Section title="Files">{active ? <FilesPanel id={id} /> : <p class="hint">Resume the sandbox to browse its files.</p>}</Section>
        <Section title="Run a command">
          <ExecPanel id={id} />
        </Section>
      </div>
      <Section title="Changes">
        <ChangesPanel id={id} />
      </Section>
      {s.template_id === 'platform/desktop' && <Section title="Desktop">{active ? <DesktopPanel id={id} /> : <p class="hint">Resume the sandbox to see its desktop.</p>}</Section>}
      <Section title="Preview ports">
        <PreviewsPanel id={id} />
      </Section>
    </>
  );
}
