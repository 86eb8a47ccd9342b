import { useState } from 'preact/hooks';
import type { Volume, VolumePage } from '../sdk-types.ts';
import { del, get, mib, patch, post, when } from '../api.ts';
import { ErrorText, Section, Table, useAction, usePoll } from '../ui.tsx';

/** The team's volumes: what they hold against their quota, who mounts them, and create, grow, delete. */
export function VolumesPage() {
  const list = usePoll(() => get<VolumePage>('/volumes?limit=1000'), [], 5000);
  const [name, setName] = useState('');
  const [size, setSize] = useState('1024');
  const { busy, error, run } = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await post('/volumes', { name, size_mib: Number(size) });
      setName('');
      await list.reload();
    });
  };
  const grow = (v: Volume) => {
    const answer = prompt(`New size of ${v.name} in MiB (now ${v.size_mib}; only growing)`, String(v.size_mib * 2));
    if (answer === null) return;
    void run(async () => {
      await patch(`/volumes/${v.id}`, { size_mib: Number(answer) });
      await list.reload();
    });
  };
  const remove = (v: Volume) =>
    run(async () => {
      await del(`/volumes/${v.id}`);
      await list.reload();
    });
  return (
    <>
      <h1>Volumes</h1>
      <ErrorText error={error ?? list.error} />
      {list.data?.volumes.length === 0 && <p>No volumes yet. A volume outlives sandboxes; mount it when creating one.</p>}
      <Table
        rows={list.data?.volumes}
        rowKey={(v) => v.id}
        rowData={(v) => ({ 'data-volume': v.name })}
        columns={[
          { head: 'Volume', cell: (v) => v.name },
          { head: 'Used', cell: (v) => `${mib(v.used_bytes)} of ${v.size_mib} MiB` },
          { head: 'Mounted by', cellClass: 'sub', cell: (v) => (v.mounted_by.length ? v.mounted_by.join(', ') : 'none') },
          { head: 'Created', cell: (v) => when(v.created_at) },
          {
            head: '',
            cellClass: 'actions',
            cell: (v) => (
              <>
                <button type="button" class="small" disabled={busy} onClick={() => grow(v)}>
                  Grow
                </button>
                <button
                  type="button"
                  class="small danger"
                  disabled={busy || v.mounted_by.length > 0}
                  title={v.mounted_by.length ? 'mounted: delete its sandboxes first' : undefined}
                  onClick={() => remove(v)}
                >
                  Delete
                </button>
              </>
            ),
          },
        ]}
      />
      <Section title="New volume">
        <form class="form" onSubmit={create}>
          <label for="volume-name">Name</label>
          <input id="volume-name" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]*" maxLength={63} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <label for="volume-size">Size (MiB)</label>
          <input id="volume-size" type="number" min={1} required value={size} onInput={(e) => setSize(e.currentTarget.value)} />
          <button type="submit" disabled={busy}>
            Create volume
          </button>
        </form>
      </Section>
    </>
  );
}
