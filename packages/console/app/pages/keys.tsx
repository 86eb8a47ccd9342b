import { useState } from 'preact/hooks';
import { del, get, type Me, post, when } from '../api.ts';
import { ErrorText, Section, Table, useAction, usePoll } from '../ui.tsx';

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  permissions: string[];
  created_at: string;
}

export function KeysPage({ me }: { me: Me }) {
  const list = usePoll(() => get<{ api_keys: ApiKey[] }>('/api-keys'), []);
  const [name, setName] = useState('');
  const [perms, setPerms] = useState<string[]>(me.permissions);
  const [created, setCreated] = useState<string | undefined>(undefined);
  const { busy, error, run } = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const k = await post<ApiKey & { key: string }>('/api-keys', { name, permissions: perms });
      setCreated(k.key);
      setName('');
      await list.reload();
    });
  };
  const toggle = (p: string) => setPerms((cur) => (cur.includes(p) ? cur.filter((x) => x !== p) : [...cur, p]));
  return (
    <>
      <h1>API keys</h1>
      <ErrorText error={error ?? list.error} />
      <Table
        rows={list.data?.api_keys}
        rowKey={(k) => k.id}
        columns={[
          {
            head: 'Name',
            cell: (k) => (
              <>
                {k.name}
                {k.id === me.key_id && <span class="tag">this session</span>}
              </>
            ),
          },
          { head: 'Prefix', cell: (k) => <code>{k.prefix}…</code> },
          { head: 'Permissions', cellClass: 'sub', cell: (k) => k.permissions.join(', ') },
          { head: 'Created', cell: (k) => when(k.created_at) },
          {
            head: '',
            cell: (k) => (
              <button
                type="button"
                class="small danger"
                disabled={busy || k.id === me.key_id}
                onClick={() =>
                  run(async () => {
                    await del(`/api-keys/${k.id}`);
                    await list.reload();
                  })
                }
              >
                Revoke
              </button>
            ),
          },
        ]}
      />
      <Section title="New key">
        <form class="form" onSubmit={create}>
          <label for="key-name">Name</label>
          <input id="key-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <fieldset>
            <legend>Permissions</legend>
            {me.permissions.map((p) => (
              <label key={p} class="check">
                <input type="checkbox" checked={perms.includes(p)} onChange={() => toggle(p)} /> {p}
              </label>
            ))}
          </fieldset>
          <button type="submit" disabled={busy}>
            Create key
          </button>
          {created && (
            <p role="status">
              New key (shown once): <code class="secret">{created}</code>
            </p>
          )}
        </form>
      </Section>
    </>
  );
}
