import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { dp, tokenOf } from '../api.ts';
import { ErrorText } from '../ui.tsx';

/** A PTY in the sandbox over the data-plane WebSocket (token in the query: browsers cannot set WebSocket headers). */
export default function TerminalPanel({ id }: { id: string }) {
  const box = useRef<HTMLElement>(null);
  const [error, setError] = useState<string | undefined>(undefined);
  const [state, setState] = useState('connecting');
  useEffect(() => {
    const term = new Terminal({ cursorBlink: true, fontSize: 14, convertEol: false, scrollback: 5000 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(box.current!);
    fit.fit();
    let ws: WebSocket | undefined;
    let closed = false;
    const encoder = new TextEncoder();
    void (async () => {
      try {
        const res = await dp(id, 'POST', '/terminals', { cols: term.cols, rows: term.rows });
        const info = (await res.json()) as { id: string };
        const headers = { sandbox_id: id, access_token: tokenOf(id) ?? '' };
        const proto = location.protocol === 'https:' ? 'wss' : 'ws';
        ws = new WebSocket(`${proto}://${location.host}/terminals/${info.id}/connect?${new URLSearchParams(headers)}`);
        ws.binaryType = 'arraybuffer';
        ws.onopen = () => {
          setState('connected');
          term.focus();
        };
        ws.onmessage = (ev) => {
          if (typeof ev.data === 'string') {
            const msg = JSON.parse(ev.data);
            if (msg.type === 'exit') term.write(`\r\n[process exited with code ${msg.exit_code}]\r\n`);
          } else term.write(new Uint8Array(ev.data as ArrayBuffer));
        };
        ws.onclose = () => !closed && setState('closed');
        term.onData((d) => ws?.readyState === WebSocket.OPEN && ws.send(encoder.encode(d)));
        term.onResize(({ cols, rows }) => ws?.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: 'resize', cols, rows })));
      } catch (err) {
        setError((err as Error).message);
      }
    })();
    const ro = new ResizeObserver(() => fit.fit());
    ro.observe(box.current!);
    return () => {
      closed = true;
      ro.disconnect();
      ws?.close();
      term.dispose();
    };
  }, [id]);
  return (
    <div>
      <p class="sub" aria-live="polite">
        Terminal {state}
      </p>
      <ErrorText error={error} />
      <section ref={box} class="terminal" aria-label="Terminal" />
    </div>
  );
}
