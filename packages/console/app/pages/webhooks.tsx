import { useState } from 'preact/hooks';
import { del, get, patch, post, when } from '../api.ts';
import { href } from '../router.ts';
import type { CreatedWebhook, Webhook, WebhookDelivery, WebhookDeliveryPage } from '../sdk-types.ts';
import { ErrorText, Section, Status, Table, useAction, usePoll } from '../ui.tsx';

const EVENTS = [
  'sandbox.created',
  'sandbox.paused',
  'sandbox.resumed',
  'sandbox.deleted',
  'sandbox.failed',
  'sandbox.auto_paused',
  'sandbox.auto_deleted',
  'snapshot.ready',
  'snapshot.failed',
  'template.built',
  'template.failed',
];

/** The team's webhook endpoints: add, test, pause, remove; each links to its deliveries. */
export function WebhooksPage() {
  const list = usePoll(() => get<{ webhooks: Webhook[] }>('/webhooks'), []);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>(['*']);
  const [created, setCreated] = useState<string | undefined>(undefined);
  const { busy, error, run } = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const w = await post<CreatedWebhook>('/webhooks', { url, events, ...(description ? { description } : {}) });
      setCreated(w.secret);
      setUrl('');
      setDescription('');
      await list.reload();
    });
  };
  const toggle = (ev: string) =>
    setEvents((cur) => {
      if (ev === '*') return cur.includes('*') ? [] : ['*'];
      const rest = cur.filter((x) => x !== '*');
      return rest.includes(ev) ? rest.filter((x) => x !== ev) : [...rest, ev];
    });
  return (
    <>
      <h1>Webhooks</h1>
      <ErrorText error={error ?? list.error} />
      {list.data?.webhooks.length === 0 && <p class="hint">No webhooks. Add an endpoint below to receive lifecycle events.</p>}
      <Table
        rows={list.data?.webhooks}
        rowKey={(w) => w.id}
        rowData={(w) => ({ 'data-webhook': w.id })}
        columns={[
          {
            head: 'Endpoint',
            cell: (w) => (
              <>
                <a {...href(`/webhooks/${w.id}`)}>{w.url}</a>
                {w.description && <div class="sub">{w.description}</div>}
              </>
            ),
          },
          { head: 'Events', class: 'wide-only', cellClass: 'sub wide-only', cell: (w) => w.events.join(', ') },
          { head: 'State', cell: (w) => <Status status={w.active ? 'active' : 'paused'} /> },
          { head: 'Created', class: 'wide-only', cell: (w) => when(w.created_at) },
          {
            head: '',
            cellClass: 'actions',
            cell: (w) => (
              <>
                <button
                  type="button"
                  class="small"
                  disabled={busy}
                  onClick={() =>
                    run(async () => {
                      await post(`/webhooks/${w.id}/test`);
                    })
                  }
                >
                  Send test
                </button>
                <button
                  type="button"
                  class="small"
                  disabled={busy}
                  onClick={() =>
                    run(async () => {
                      await patch(`/webhooks/${w.id}`, { active: !w.active });
                      await list.reload();
                    })
                  }
                >
                  {w.active ? 'Disable' : 'Enable'}
                </button>
                <button
                  type="button"
                  class="small danger"
                  disabled={busy}
                  onClick={() =>
                    run(async () => {
                      await del(`/webhooks/${w.id}`);
                      await list.reload();
                    })
                  }
                >
                  Delete
                </button>
              </>
            ),
          },
        ]}
      />
      <Section title="New webhook">
        <form class="form" onSubmit={create}>
          <label for="webhook-url">Endpoint URL</label>
          <input id="webhook-url" type="url" required placeholder="https://example.com/sandpit-events" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          <label for="webhook-description">Description (optional)</label>
          <input id="webhook-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          <fieldset>
            <legend>Events</legend>
            <label class="check">
              <input type="checkbox" checked={events.includes('*')} onChange={() => toggle('*')} /> all events
            </label>
            {EVENTS.map((ev) => (
              <label key={ev} class="check">
                <input type="checkbox" checked={events.includes('*') || events.includes(ev)} disabled={events.includes('*')} onChange={() => toggle(ev)} /> {ev}
              </label>
            ))}
          </fieldset>
          <button type="submit" disabled={busy || events.length === 0}>
            Add webhook
          </button>
          {created && (
            <p role="status">
              Signing secret (shown once; deliveries carry X-Sandpit-Signature made with it): <code class="secret">{created}</code>
            </p>
          )}
        </form>
      </Section>
    </>
  );
}

/** One endpoint's deliveries, newest first, refreshed while shown. */
export function WebhookDeliveriesPage({ id }: { id: string }) {
  const hook = usePoll(() => get<Webhook>(`/webhooks/${encodeURIComponent(id)}`), [id]);
  const [status, setStatus] = useState('');
  const list = usePoll(() => get<WebhookDeliveryPage>(`/webhooks/${encodeURIComponent(id)}/deliveries?limit=100${status ? `&status=${status}` : ''}`), [id, status], 3000);
  const { busy, error, run } = useAction();
  const outcome = (d: WebhookDelivery) => (d.last_status_code !== undefined ? `HTTP ${d.last_status_code}` : (d.last_error ?? '-'));
  return (
    <>
      <p>
        <a {...href('/webhooks')}>← Webhooks</a>
      </p>
      <h1>Deliveries</h1>
      <p class="sub">{hook.data?.url}</p>
      <ErrorText error={error ?? hook.error ?? list.error} />
      <div class="filters">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="pending">pending</option>
            <option value="delivered">delivered</option>
            <option value="failed">failed</option>
          </select>
        </label>
        <button
          type="button"
          class="small"
          disabled={busy}
          onClick={() =>
            run(async () => {
              await post(`/webhooks/${encodeURIComponent(id)}/test`);
              await list.reload();
            })
          }
        >
          Send test
        </button>
      </div>
      {list.data?.deliveries.length === 0 && <p class="hint">No deliveries yet.</p>}
      <Table
        rows={list.data?.deliveries}
        rowKey={(d) => d.id}
        rowData={(d) => ({ 'data-delivery': d.id })}
        columns={[
          { head: 'Event', cell: (d) => <code>{d.event_type}</code> },
          { head: 'Status', cell: (d) => <Status status={d.status} /> },
          { head: 'Attempts', cell: (d) => String(d.attempts) },
          {
            head: 'Last answer',
            cell: (d) => (
              <span title={d.attempt_log.map((a) => `${when(a.at)}: ${a.status_code !== undefined ? `HTTP ${a.status_code}` : a.error} (${a.duration_ms} ms)`).join('\n')}>{outcome(d)}</span>
            ),
          },
          { head: 'Next attempt', class: 'wide-only', cell: (d) => when(d.next_attempt_at) },
          { head: 'Created', cell: (d) => when(d.created_at) },
          { head: 'Event id', class: 'wide-only', cellClass: 'sub wide-only', cell: (d) => d.event_id },
        ]}
      />
    </>
  );
}
