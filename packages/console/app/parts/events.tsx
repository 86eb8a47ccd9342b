import type { SandboxEvent } from '../sdk-types.ts';
import { get } from '../api.ts';
import { ErrorText, usePoll } from '../ui.tsx';

/** The lifecycle log, newest first; refetched when the status changes and every few seconds. */
export function EventsPanel({ id, status }: { id: string; status: string }) {
  const { data, error } = usePoll(() => get<{ events: SandboxEvent[] }>(`/sandboxes/${id}/events?limit=1000`), [id, status], 5000);
  return (
    <>
      <ErrorText error={error} />
      <ol class="events" aria-label="Lifecycle events">
        {data?.events
          .slice()
          .reverse()
          .map((e) => (
            <li key={e.seq}>
              <time dateTime={e.at}>{new Date(e.at).toLocaleTimeString()}</time> <strong>{e.type}</strong> <span class="sub">{e.reason}</span>
            </li>
          ))}
      </ol>
    </>
  );
}
