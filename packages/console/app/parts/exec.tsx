import { useRef, useState } from 'preact/hooks';
import { fail, readSse } from '../api.ts';
import { ErrorText, useAction } from '../ui.tsx';

/** Runs a command over the control plane and streams its output as it comes. */
export function ExecPanel({ id }: { id: string }) {
  const [command, setCommand] = useState('');
  const [output, setOutput] = useState('');
  const [exit, setExit] = useState<number | undefined>(undefined);
  const { busy, error, run } = useAction();
  const outRef = useRef<HTMLPreElement>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    setOutput('');
    setExit(undefined);
    void run(async () => {
      const res = await fetch(`/sandboxes/${id}/exec/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-sandpit-console': '1', accept: 'text/event-stream' },
        body: JSON.stringify({ command }),
      });
      if (!res.ok) await fail(res);
      await readSse(res, (ev: { stdout?: string; stderr?: string; exit_code?: number }) => {
        const text = (ev.stdout ?? '') + (ev.stderr ?? '');
        if (text) setOutput((o) => o + text);
        if (ev.exit_code !== undefined) setExit(ev.exit_code);
        requestAnimationFrame(() => outRef.current?.scrollTo(0, outRef.current.scrollHeight));
      });
    });
  };
  return (
    <form onSubmit={submit} class="exec">
      <label for={`exec-${id}`}>Command</label>
      <div class="row">
        <input id={`exec-${id}`} value={command} placeholder="ls -la; python3 --version" onInput={(e) => setCommand(e.currentTarget.value)} />
        <button type="submit" disabled={busy || !command}>
          Run
        </button>
      </div>
      <pre ref={outRef} class="output" role="log" aria-label="Command output">
        {output}
      </pre>
      {exit !== undefined && <p class="sub">exit code {exit}</p>}
      <ErrorText error={error} />
    </form>
  );
}
