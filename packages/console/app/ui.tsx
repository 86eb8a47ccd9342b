import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** Loads data now and every `everyMs` (when given) while mounted; `reload` fetches at once. */
export function usePoll<T>(load: () => Promise<T>, deps: unknown[], everyMs?: number) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(async () => {
    try {
      setData(await loadRef.current());
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
    }
  }, []);
  useEffect(() => {
    void reload();
    if (!everyMs) return;
    const t = setInterval(() => void reload(), everyMs);
    return () => clearInterval(t);
  }, deps);
  return { data, error, reload, setData };
}

/** Runs an action, keeping its error to show and a busy flag to disable the button. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}

export function ErrorText({ error }: { error?: string }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Status({ status }: { status: string }) {
  return <span class={`status status-${status}`}>{status}</span>;
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card" aria-label={title}>
      <header class="card-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** A column of a `Table`: its heading (unique in the table) and what it shows of each row. */
export interface Column<T> {
  head: string;
  cell: (row: T) => ComponentChildren;
  /** On the heading and the cells (`wide-only` hides the column on a narrow screen). */
  class?: string;
  /** On the cells only, instead of `class`. */
  cellClass?: string;
}

/** The console's table: a row per item (none while `rows` is still loading); `rowData` gives a row its `data-` attributes. */
export function Table<T>({ columns, rows, rowKey, rowData }: { columns: Column<T>[]; rows: T[] | undefined; rowKey: (row: T) => string; rowData?: (row: T) => Record<`data-${string}`, string> }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.head} class={c.class}>
                {c.head}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows?.map((r) => (
            <tr key={rowKey(r)} {...rowData?.(r)}>
              {columns.map((c) => (
                <td key={c.head} class={c.cellClass ?? c.class}>
                  {c.cell(r)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Parses "KEY=value" lines into a record (blank lines ignored). */
export function parsePairs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t) continue;
    const eq = t.indexOf('=');
    if (eq <= 0) throw new Error(`'${t}' is not KEY=value`);
    out[t.slice(0, eq).trim()] = t.slice(eq + 1);
  }
  return out;
}
