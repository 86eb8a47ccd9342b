import type { SandboxWithToken, Snapshot } from '../sdk-types.ts';
import { del, get, mib, post, rememberToken, when } from '../api.ts';
import { navigate } from '../router.ts';
import { ErrorText, Status, Table, useAction, usePoll } from '../ui.tsx';

export function SnapshotsPage() {
  const list = usePoll(() => get<{ snapshots: Snapshot[] }>('/snapshots?limit=200'), [], 3000);
  const { busy, error, run } = useAction();
  const fork = (s: Snapshot) =>
    run(async () => {
      const sb = await post<SandboxWithToken>('/sandboxes', { from_snapshot: s.id });
      rememberToken(sb.id, sb.access_token);
      navigate(`/sandboxes/${sb.id}`);
    });
  const remove = (s: Snapshot) =>
    run(async () => {
      await del(`/snapshots/${s.id}`);
      await list.reload();
    });
  return (
    <>
      <h1>Snapshots</h1>
      <ErrorText error={error ?? list.error} />
      {list.data?.snapshots.length === 0 && <p>No snapshots yet. Take one from a sandbox's page.</p>}
      <Table
        rows={list.data?.snapshots}
        rowKey={(s) => s.id}
        columns={[
          { head: 'Snapshot', cell: (s) => s.name ?? s.id },
          { head: 'Status', cell: (s) => <Status status={s.status} /> },
          { head: 'From sandbox', cellClass: 'sub', cell: (s) => s.sandbox_id },
          { head: 'Size', cell: (s) => mib(s.size_bytes) },
          { head: 'Created', cell: (s) => when(s.created_at) },
          {
            head: '',
            cellClass: 'actions',
            cell: (s) => (
              <>
                <button type="button" class="small" disabled={busy || s.status !== 'ready'} onClick={() => fork(s)}>
                  New sandbox from it
                </button>
                <button type="button" class="small danger" disabled={busy} onClick={() => remove(s)}>
                  Delete
                </button>
              </>
            ),
          },
        ]}
      />
    </>
  );
}
