import type { ApplyChangesResult, SandboxChange, SandboxChangePage } from '../sdk-types.ts';
import { useState } from 'preact/hooks';
import { fmtSize, get, getText, post } from '../api.ts';
import { ErrorText, Table, useAction, usePoll } from '../ui.tsx';

/**
 * What the sandbox changed against its template or the snapshot it was forked from, a page at a
 * time under a path; a file's diff on click; and another sandbox's changes applied here.
 */
export function ChangesPanel({ id }: { id: string }) {
  const [prefix, setPrefix] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const [diff, setDiff] = useState<{ path: string; text: string } | undefined>(undefined);
  const [from, setFrom] = useState('');
  const [applied, setApplied] = useState<ApplyChangesResult | undefined>(undefined);
  const cursor = cursors.at(-1);
  const query = new URLSearchParams({ limit: '50', ...(prefix ? { path: prefix } : {}), ...(cursor ? { cursor } : {}) });
  const page = usePoll(() => get<SandboxChangePage>(`/sandboxes/${id}/changes?${query}`), [id, prefix, cursor]);
  const { busy, error, run } = useAction();
  const showDiff = (c: SandboxChange) => run(async () => setDiff({ path: c.path, text: await getText(`/sandboxes/${id}/changes?diff=${encodeURIComponent(c.path)}`) }));
  const apply = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      setApplied(await post<ApplyChangesResult>(`/sandboxes/${id}/changes/apply`, { from: from.trim() }));
      setCursors([]);
      await page.reload();
    });
  };
  const base = page.data?.base;
  return (
    <div class="changes">
      <div class="row">
        <label class="grow">
          Under path
          <input
            value={prefix}
            placeholder="/ (everything)"
            onChange={(e) => {
              setPrefix((e.currentTarget as HTMLInputElement).value.trim());
              setCursors([]);
            }}
          />
        </label>
        <button type="button" onClick={() => void page.reload()}>
          Refresh
        </button>
      </div>
      {base && (
        <p class="hint">
          Against its {base.kind} <code>{base.id}</code>.
        </p>
      )}
      <ErrorText error={page.error ?? error} />
      <Table<SandboxChange>
        columns={[
          {
            head: 'Path',
            cell: (c) =>
              c.type === 'file' && c.kind !== 'deleted' ? (
                <button type="button" class="link" onClick={() => void showDiff(c)}>
                  {c.path}
                </button>
              ) : (
                c.path
              ),
          },
          { head: 'Change', cell: (c) => c.kind },
          { head: 'Type', cell: (c) => c.type, class: 'wide-only' },
          { head: 'Size', cell: (c) => (c.type === 'file' ? fmtSize(c.size) : '-'), class: 'wide-only' },
        ]}
        rows={page.data?.changes}
        rowKey={(c) => c.path}
        rowData={(c) => ({ 'data-path': c.path, 'data-kind': c.kind })}
      />
      {page.data && page.data.changes.length === 0 && <p class="hint">No changes{prefix ? ` under ${prefix}` : ''}.</p>}
      <div class="row">
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous
        </button>
        <button type="button" disabled={!page.data?.next_cursor} onClick={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}>
          Next
        </button>
      </div>
      {diff && (
        <figure class="diff" aria-label={`Diff of ${diff.path}`}>
          <figcaption>
            {diff.path}{' '}
            <button type="button" onClick={() => setDiff(undefined)}>
              Close
            </button>
          </figcaption>
          <pre>{diff.text || '(no textual difference)'}</pre>
        </figure>
      )}
      <form class="row" onSubmit={apply}>
        <label class="grow">
          Apply the changes of sandbox
          <input value={from} placeholder="sandbox id (same base)" onInput={(e) => setFrom((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={busy || from.trim() === ''}>
          Apply
        </button>
      </form>
      {applied && (
        <p class="hint" role="status">
          Applied {applied.applied.length}, conflicts {applied.conflicts.length}
          {applied.conflicts.length > 0 && `: ${applied.conflicts.map((c) => c.path).join(', ')}`}, skipped {applied.skipped.length}.
        </p>
      )}
    </div>
  );
}
