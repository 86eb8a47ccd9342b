import type { Template } from '../sdk-types.ts';
import { useEffect, useRef, useState } from 'preact/hooks';
import { fail, get, post, readSse, when } from '../api.ts';
import { ErrorText, Section, Status, Table, useAction, usePoll } from '../ui.tsx';

const EXAMPLE = JSON.stringify({ name: 'my-template', steps: [{ type: 'run', command: 'echo hello > /home/user/hello.txt' }] }, null, 2);

/** A build's log, streamed as it is written. */
function BuildLog({ template, build }: { template: string; build: string }) {
  const [lines, setLines] = useState<string[]>([]);
  const [error, setError] = useState<string | undefined>(undefined);
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const ctl = new AbortController();
    setLines([]);
    void (async () => {
      const res = await fetch(`/templates/${encodeURIComponent(template)}/builds/${build}/logs`, { signal: ctl.signal, headers: { accept: 'text/event-stream' } });
      if (!res.ok) await fail(res);
      await readSse(res, (ev: { line?: string; finished?: boolean; status?: string; error?: string }) => {
        const line = ev.finished ? `[build ${ev.status}${ev.error ? `: ${ev.error}` : ''}]` : (ev.line ?? '');
        setLines((l) => [...l, line]);
        requestAnimationFrame(() => pre.current?.scrollTo(0, pre.current.scrollHeight));
      });
    })().catch((err) => !ctl.signal.aborted && setError((err as Error).message));
    return () => ctl.abort();
  }, [template, build]);
  return (
    <>
      <ErrorText error={error} />
      <pre ref={pre} class="output" role="log" aria-label="Build log">
        {lines.join('\n')}
      </pre>
    </>
  );
}

export function TemplatesPage() {
  const list = usePoll(() => get<{ templates: Template[] }>('/templates'), [], 3000);
  const [logOf, setLogOf] = useState<{ template: string; build: string } | undefined>(undefined);
  const [body, setBody] = useState(EXAMPLE);
  const { busy, error, run } = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const t = await post<Template & { build_id: string }>('/templates', JSON.parse(body));
      setLogOf({ template: t.id, build: t.build_id });
      await list.reload();
    });
  };
  return (
    <>
      <h1>Templates</h1>
      <ErrorText error={list.error} />
      <Table
        rows={list.data?.templates}
        rowKey={(t) => t.id}
        columns={[
          {
            head: 'Name',
            cell: (t) => (
              <>
                {t.name}
                {t.curated && <span class="tag">curated</span>}
              </>
            ),
          },
          {
            head: 'Status',
            cell: (t) => (
              <>
                <Status status={t.status} />
                {t.error && <div class="sub">{t.error}</div>}
              </>
            ),
          },
          {
            head: 'Resources',
            cell: (t) => (
              <>
                {t.resources.vcpu_count} vCPU · {t.resources.memory_mib} MiB
              </>
            ),
          },
          { head: 'Updated', cell: (t) => when(t.updated_at) },
          {
            head: 'Build log',
            cell: (t) =>
              t.latest_build_id && (
                <button type="button" class="small" onClick={() => setLogOf({ template: t.id, build: t.latest_build_id! })}>
                  Show log
                </button>
              ),
          },
        ]}
      />
      {logOf && (
        <Section title="Build log">
          <BuildLog template={logOf.template} build={logOf.build} />
        </Section>
      )}
      <Section title="New template">
        <form class="form" onSubmit={create}>
          <label for="template-body">Definition (JSON, as POST /templates takes it)</label>
          <textarea id="template-body" rows={8} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
          <button type="submit" disabled={busy}>
            Build
          </button>
          <ErrorText error={error} />
        </form>
      </Section>
    </>
  );
}
