import type { SandboxInfo } from '../sdk-types.ts';
import { useState } from 'preact/hooks';
import { get, when } from '../api.ts';
import { href } from '../router.ts';
import { ErrorText, parsePairs, Status, usePoll } from '../ui.tsx';

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
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Sandbox</th>
                <th>Status</th>
                <th class="wide-only">Template</th>
                <th class="wide-only">Resources</th>
                <th>Metadata</th>
                <th class="wide-only">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.sandboxes.map((s) => (
                <tr key={s.id} data-sandbox={s.id}>
                  <td>
                    <a {...href(`/sandboxes/${s.id}`)}>{s.name || s.id}</a>
                    {s.name && <div class="sub">{s.id}</div>}
                  </td>
                  <td>
                    <Status status={s.status} />
                  </td>
                  <td class="wide-only">{s.template_id}</td>
                  <td class="wide-only">
                    {s.resources.vcpu_count} vCPU · {s.resources.memory_mib} MiB
                  </td>
                  <td>
                    {Object.entries(s.metadata).map(([k, v]) => (
                      <span class="tag" key={k}>
                        {k}={v}
                      </span>
                    ))}
                  </td>
                  <td class="wide-only">{when(s.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
