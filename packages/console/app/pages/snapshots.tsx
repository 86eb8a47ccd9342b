import type { SandboxWithToken, Snapshot } from '../sdk-types.ts';
import { del, get, mib, post, rememberToken, when } from '../api.ts';
import { navigate } from '../router.ts';
import { ErrorText, Status, useAction, usePoll } from '../ui.tsx';

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
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th>Snapshot</th>
              <th>Status</th>
              <th>From sandbox</th>
              <th>Size</th>
              <th>Created</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.data?.snapshots.map((s) => (
              <tr key={s.id}>
                <td>{s.name ?? s.id}</td>
                <td>
                  <Status status={s.status} />
                </td>
                <td class="sub">{s.sandbox_id}</td>
                <td>{mib(s.size_bytes)}</td>
                <td>{when(s.created_at)}</td>
                <td class="actions">
                  <button type="button" class="small" disabled={busy || s.status !== 'ready'} onClick={() => fork(s)}>
                    New sandbox from it
                  </button>
                  <button type="button" class="small danger" disabled={busy} onClick={() => remove(s)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
