import { useState } from 'preact/hooks';
import { del, get, post } from '../api.ts';
import { ErrorText, useAction, usePoll } from '../ui.tsx';

interface PreviewPort {
  port: number;
  access: string;
  url: string;
  preview_token?: string;
}

/** Ports published from the sandbox, with their links. */
export function PreviewsPanel({ id }: { id: string }) {
  const list = usePoll(() => get<{ preview_ports: PreviewPort[] }>(`/sandboxes/${id}/preview-ports`), [id]);
  const [port, setPort] = useState('');
  const { busy, error, run } = useAction();
  const publish = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await post(`/sandboxes/${id}/preview-ports`, { port: Number(port) });
      setPort('');
      await list.reload();
    });
  };
  return (
    <>
      <ul class="plain">
        {list.data?.preview_ports.map((p) => (
          <li key={p.port}>
            <a href={p.url} target="_blank" rel="noopener noreferrer">
              {p.url}
            </a>{' '}
            <span class="tag">{p.access}</span>{' '}
            <button
              type="button"
              class="small"
              disabled={busy}
              onClick={() =>
                run(async () => {
                  await del(`/sandboxes/${id}/preview-ports/${p.port}`);
                  await list.reload();
                })
              }
            >
              Unpublish
            </button>
          </li>
        ))}
        {list.data?.preview_ports.length === 0 && <li class="hint">No published ports.</li>}
      </ul>
      <form class="row" onSubmit={publish}>
        <label>
          Port
          <input type="number" min={1} max={65535} value={port} onInput={(e) => setPort(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy || !port}>
          Publish
        </button>
      </form>
      <ErrorText error={error ?? list.error} />
    </>
  );
}
