import type { SandboxWithToken, Template } from '../sdk-types.ts';
import { useState } from 'preact/hooks';
import { get, post, rememberToken } from '../api.ts';
import { navigate } from '../router.ts';
import { ErrorText, parsePairs, useAction, usePoll } from '../ui.tsx';

/** Create from a template with name, env, metadata and timers; resources come with the template. */
export function CreateSandboxPage() {
  const templates = usePoll(() => get<{ templates: Template[] }>('/templates'), []);
  const [template, setTemplate] = useState('platform/base');
  const [name, setName] = useState('');
  const [env, setEnv] = useState('');
  const [metadata, setMetadata] = useState('');
  const [autoPause, setAutoPause] = useState('');
  const { busy, error, run } = useAction();
  const chosen = templates.data?.templates.find((t) => t.id === template || t.name === template);
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const body: Record<string, unknown> = { from_template: template, env: parsePairs(env), metadata: parsePairs(metadata) };
      if (name) body.name = name;
      if (autoPause) body.auto_pause_seconds = Number(autoPause);
      const sb = await post<SandboxWithToken>('/sandboxes', body);
      rememberToken(sb.id, sb.access_token);
      navigate(`/sandboxes/${sb.id}`);
    });
  };
  return (
    <>
      <h1>New sandbox</h1>
      <form class="card form" onSubmit={submit}>
        <label for="template">Template</label>
        <select id="template" value={template} onChange={(e) => setTemplate(e.currentTarget.value)}>
          {!templates.data && <option value="platform/base">platform/base</option>}
          {templates.data?.templates.map((t) => (
            <option key={t.id} value={t.curated ? t.name : t.id}>
              {t.name} {t.usable || t.curated ? '' : `(${t.status})`}
            </option>
          ))}
        </select>
        {chosen && (
          <p class="hint">
            Resources: {chosen.resources.vcpu_count} vCPU, {chosen.resources.memory_mib} MiB memory, {chosen.resources.disk_mib} MiB disk
          </p>
        )}
        <label for="name">Name</label>
        <input id="name" value={name} maxLength={64} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="env">Environment (KEY=value per line)</label>
        <textarea id="env" rows={3} value={env} onInput={(e) => setEnv(e.currentTarget.value)} />
        <label for="metadata">Metadata (key=value per line)</label>
        <textarea id="metadata" rows={3} value={metadata} onInput={(e) => setMetadata(e.currentTarget.value)} />
        <label for="auto-pause">Auto-pause after idle seconds (optional)</label>
        <input id="auto-pause" type="number" min={1} value={autoPause} onInput={(e) => setAutoPause(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create sandbox'}
        </button>
        <ErrorText error={error ?? templates.error} />
      </form>
    </>
  );
}
