import { ApiError, Sandbox, SandpitClient } from './sdk.ts';
import { Command, InvalidArgumentError } from 'commander';

/** Options of every command that talks to the API. */
export interface ApiOptions {
  apiUrl?: string;
  apiKey?: string;
  json?: boolean;
}

/** A subcommand that reaches the API through the SDK, configured by flags or SANDPIT_API_URL / SANDPIT_API_KEY. */
export function apiCommand(name: string, description: string): Command {
  return new Command(name)
    .description(description)
    .option('--api-url <url>', 'control-plane address (default: $SANDPIT_API_URL or http://localhost:3000)')
    .option('--api-key <key>', 'API key (default: $SANDPIT_API_KEY)')
    .option('--json', 'print JSON, for scripts');
}

export function connect(opts: ApiOptions): SandpitClient {
  const client = new SandpitClient({ apiUrl: opts.apiUrl, apiKey: opts.apiKey });
  if (!client.http.apiKey) throw new Error('no API key: pass --api-key or set SANDPIT_API_KEY');
  return client;
}

/** A live sandbox for data-plane commands: attaching resumes it when paused and yields its access token. */
export function sandboxOf(id: string, opts: ApiOptions): Promise<Sandbox> {
  return Sandbox.connect(id, { client: connect(opts) });
}

/** Like ssh: a remote command's own exit codes pass through, so the CLI's failures use one it rarely picks. */
export const CLI_FAILURE = 255;

export const exitStatus = (code: number) => (Number.isInteger(code) && code >= 0 && code <= 255 ? code : CLI_FAILURE);

/** Wraps an action: a failure prints one line (with the API code) instead of a stack, and sets the exit code. */
export function run<A extends unknown[]>(action: (...args: A) => Promise<void>, failureExitCode = 1) {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (err) {
      const code = err instanceof ApiError ? ` [${err.status} ${err.code}]` : '';
      console.error(`error: ${(err as Error).message}${code}`);
      process.exitCode = failureExitCode;
    }
  };
}

export const printJson = (value: unknown) => console.log(JSON.stringify(value, null, 2));

/** Collects repeated `KEY=VALUE` options into an object (a commander option parser). */
export function keyValue(entry: string, into: Record<string, string> = {}): Record<string, string> {
  const eq = entry.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError(`expected KEY=VALUE, got '${entry}'`);
  return { ...into, [entry.slice(0, eq)]: entry.slice(eq + 1) };
}

export function integer(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError(`expected an integer, got '${value}'`);
  return n;
}

/** Sizes for people: 1.5 KiB, 50.0 MiB. */
export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${n.toFixed(1)} ${units[i]}`;
}

/** Left-aligned columns for people; scripts use --json. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows])
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    );
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** Shows a spinner on a terminal's stderr while `work` runs; silent when piped or printing JSON. */
export async function spin<T>(text: string, opts: ApiOptions, work: () => Promise<T>): Promise<T> {
  if (opts.json || !process.stderr.isTTY) return work();
  let i = 0;
  const timer = setInterval(() => process.stderr.write(`\r${FRAMES[i++ % FRAMES.length]} ${text}`), 80);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    process.stderr.write('\r\x1b[K');
  }
}
