import type { SandboxInfo } from '../sdk-types.ts';
import { useState } from 'preact/hooks';
import { get, when } from '../api.ts';
import { href } from '../router.ts';
import { ErrorText, parsePairs, Status, Table, usePoll } from '../ui.tsx';

const STATUSES = ['active', 'paused', 'pausing', 'resuming', 'failed'];

/** The team's sandboxes with their live status (polled), filtered by status and metadata. */
export function SandboxesPage() {
  const [status, setStatus] = useState('');
  const [metaText, setMetaText] = useState('');
  let filterError: string | undefined;
  const query = new URLSearchParams({ limit: '200' });
  if (status) query.set('status', status);
  try {
    for (const [k, v] of Object.entries(parsePairs(metaText.replace(/,/g, '\n')))) query.set(`metadata.${k}`, v);
  } catch (err) {
    filterError = (err as Error).message;
  }
  const qs = query.toString();
  const { data, error } = usePoll(() => get<{ sandboxes: SandboxInfo[] }>(`/sandboxes?${qs}`), [qs], 2000);
  return (
    <>
      <div class="page-head">
        <h1>Sandboxes</h1>
        <a class="button" {...href('/sandboxes/new')}>
          New sandbox
        </a>
      </div>
      <div class="filters">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Metadata
          <input placeholder="key=value, key2=value2" value={metaText} onInput={(e) => setMetaText(e.currentTarget.value)} />
        </label>
      </div>
      <ErrorText error={filterError ?? error} />
      {data && data.sandboxes.length === 0 && <p>No sandboxes match.</p>}
      {data && data.sandboxes.length > 0 && (
        <Table
          rows={data.sandboxes}
          rowKey={(s) => s.id}
          rowData={(s) => ({ 'data-sandbox': s.id })}
          columns={[
            {
              head: 'Sandbox',
              cell: (s) => (
                <>
                  <a {...href(`/sandboxes/${s.id}`)}>{s.name || s.id}</a>
                  {s.name && <div class="sub">{s.id}</div>}
                </>
              ),
            },
            { head: 'Status', cell: (s) => <Status status={s.status} /> },
            { head: 'Template', class: 'wide-only', cell: (s) => s.template_id },
            {
              head: 'Resources',
              class: 'wide-only',
              cell: (s) => (
                <>
                  {s.resources.vcpu_count} vCPU · {s.resources.memory_mib} MiB
                </>
              ),
            },
            {
              head: 'Metadata',
              cell: (s) =>
                Object.entries(s.metadata).map(([k, v]) => (
                  <span class="tag" key={k}>
                    {k}={v}
                  </span>
                )),
            },
            { head: 'Created', class: 'wide-only', cell: (s) => when(s.created_at) },
          ]}
        />
      )}
    </>
  );
}
