import { useState } from 'preact/hooks';
import { get, when } from '../api.ts';
import type { AuditEntry, AuditLogPage as Page } from '../sdk-types.ts';
import { ErrorText, Table, usePoll } from '../ui.tsx';

interface Filters {
  actor: string;
  action: string;
  resource_type: string;
  resource_id: string;
  since: string;
  until: string;
}

const EMPTY: Filters = { actor: '', action: '', resource_type: '', resource_id: '', since: '', until: '' };

/** Who changed what, newest first; filters by actor, action, resource and time; older pages on demand. */
export function AuditLogPage() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [older, setOlder] = useState<AuditEntry[]>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const query = (f: Filters, after?: string) => {
    const q = new URLSearchParams({ limit: '50' });
    for (const [k, v] of Object.entries(f)) {
      if (!v) continue;
      // datetime-local has no zone: it is the viewer's local time.
      q.set(k, k === 'since' || k === 'until' ? new Date(v).toISOString() : v.trim());
    }
    if (after) q.set('cursor', after);
    return `/audit-log?${q}`;
  };
  const first = usePoll(async () => {
    const page = await get<Page>(query(filters));
    setOlder([]);
    setCursor(page.next_cursor);
    return page;
  }, [filters]);
  const [loadError, setLoadError] = useState<string | undefined>(undefined);
  const more = async () => {
    try {
      const page = await get<Page>(query(filters, cursor));
      setOlder((cur) => [...cur, ...page.entries]);
      setCursor(page.next_cursor);
    } catch (err) {
      setLoadError((err as Error).message);
    }
  };
  const field = (name: keyof Filters, label: string, time = false) => {
    const onInput = (e: { currentTarget: HTMLInputElement }) => setDraft({ ...draft, [name]: e.currentTarget.value });
    return (
      <label for={`audit-${name}`}>
        {label}
        {time ? <input id={`audit-${name}`} type="datetime-local" value={draft[name]} onInput={onInput} /> : <input id={`audit-${name}`} type="text" value={draft[name]} onInput={onInput} />}
      </label>
    );
  };
  const rows = first.data ? [...first.data.entries, ...older] : undefined;
  return (
    <>
      <h1>Audit log</h1>
      <form
        class="filters"
        aria-label="Audit log filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        {field('actor', 'Actor (key or user id)')}
        {field('action', 'Action')}
        {field('resource_type', 'Resource type')}
        {field('resource_id', 'Resource id')}
        {field('since', 'Since', true)}
        {field('until', 'Until', true)}
        <button type="submit">Filter</button>
      </form>
      <ErrorText error={first.error ?? loadError} />
      {rows?.length === 0 && <p class="hint">No entries.</p>}
      <Table
        rows={rows}
        rowKey={(e) => e.id}
        rowData={(e) => ({ 'data-action': e.action })}
        columns={[
          { head: 'When', cell: (e) => when(e.at) },
          {
            head: 'Who',
            cell: (e) => (
              <>
                {e.actor.type === 'access_token' ? 'sandbox token' : e.actor.type === 'console_session' ? 'console' : 'API key'}
                <div class="sub">{e.actor.key_id ?? ''}</div>
              </>
            ),
          },
          { head: 'Action', cell: (e) => <code>{e.action}</code> },
          {
            head: 'Resource',
            cell: (e) => (
              <>
                {e.resource.type}
                {e.resource.id && <div class="sub">{e.resource.id}</div>}
              </>
            ),
          },
          { head: 'Result', cell: (e) => String(e.status) },
          {
            head: 'From',
            class: 'wide-only',
            cell: (e) => (
              <>
                {e.request.ip}
                {e.request.user_agent && <div class="sub">{e.request.user_agent}</div>}
              </>
            ),
          },
        ]}
      />
      {cursor && (
        <button type="button" class="small" onClick={() => void more()}>
          Older entries
        </button>
      )}
    </>
  );
}
