import { useState } from 'preact/hooks';
import { post } from '../api.ts';
import { ErrorText, useAction } from '../ui.tsx';

interface LiveView {
  url: string;
  view_only: boolean;
  expires_at: string;
}

/** The desktop's noVNC live view in the page: view-only unless asked to control it. */
export function DesktopPanel({ id }: { id: string }) {
  const [view, setView] = useState<LiveView | undefined>();
  const { busy, error, run } = useAction();
  const open = (viewOnly: boolean) =>
    run(async () => {
      setView(await post<LiveView>(`/sandboxes/${id}/desktop/live-view`, { view_only: viewOnly }));
    });
  return (
    <>
      <div class="row">
        <button type="button" disabled={busy} onClick={() => open(true)}>
          Watch
        </button>
        <button type="button" disabled={busy} onClick={() => open(false)}>
          Control
        </button>
        {view && <span class="hint">{`${view.view_only ? 'View only' : 'Interactive'}; the link opens new connections until ${new Date(view.expires_at).toLocaleTimeString()}`}</span>}
      </div>
      {view && <iframe title="Live view" src={view.url} style={{ width: '100%', aspectRatio: '16 / 10', border: 0 }} />}
      <ErrorText error={error} />
    </>
  );
}
