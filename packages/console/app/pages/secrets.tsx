import { useState } from 'preact/hooks';
import { del, get, post, when } from '../api.ts';
import { ErrorText, Section, useAction, usePoll } from '../ui.tsx';

interface Secret {
  name: string;
  allowed_hosts: string[];
  created_at: string;
}

/** Names and host scopes only: values are write-only. */
export function SecretsPage() {
  const list = usePoll(() => get<{ secrets: Secret[] }>('/secrets'), []);
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [hosts, setHosts] = useState('');
  const { busy, error, run } = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const allowed = hosts.split(/[\s,]+/).filter(Boolean);
      await post('/secrets', { name, value, ...(allowed.length ? { allowed_hosts: allowed } : {}) });
      setName('');
      setValue('');
      setHosts('');
      await list.reload();
    });
  };
  return (
    <>
      <h1>Secrets</h1>
      <ErrorText error={error ?? list.error} />
      <ul class="plain">
        {list.data?.secrets.map((s) => (
          <li key={s.name}>
            <strong>{s.name}</strong>{' '}
            <span class="sub">
              {s.allowed_hosts.length ? s.allowed_hosts.join(', ') : 'any host'} · {when(s.created_at)}
            </span>{' '}
            <button
              type="button"
              class="small danger"
              disabled={busy}
              onClick={() =>
                run(async () => {
                  await del(`/secrets/${encodeURIComponent(s.name)}`);
                  await list.reload();
                })
              }
            >
              Delete
            </button>
          </li>
        ))}
        {list.data?.secrets.length === 0 && <li class="hint">No secrets.</li>}
      </ul>
      <Section title="New secret">
        <form class="form" onSubmit={create}>
          <label for="secret-name">Name</label>
          <input id="secret-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <label for="secret-value">Value (never shown again)</label>
          <input id="secret-value" type="password" autocomplete="off" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          <label for="secret-hosts">Allowed hosts (optional, comma separated)</label>
          <input id="secret-hosts" value={hosts} onInput={(e) => setHosts(e.currentTarget.value)} />
          <button type="submit" disabled={busy}>
            Save secret
          </button>
        </form>
      </Section>
    </>
  );
}
