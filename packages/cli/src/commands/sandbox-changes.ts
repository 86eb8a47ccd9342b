import type { SandboxChange, SandboxChangePage } from '../sdk.ts';
import { type ApiOptions, apiCommand, bytes, connect, integer, printJson, printTable, run, spin } from '../api.ts';

interface ChangesOptions extends ApiOptions {
  path?: string;
  diff?: string;
  limit?: number;
}

interface ApplyOptions extends ApiOptions {
  from: string;
  path?: string[];
}

const collect = (value: string, into: string[] = []) => [...into, value];

/** `sandpit sandbox changes <id>`: what the sandbox changed against its base, every page (or the first `--limit`), or one file's diff. */
export function changesCommand() {
  return apiCommand('changes', "files added, modified and deleted against the sandbox's template or snapshot, or one file's diff")
    .argument('<id>', 'sandbox id')
    .option('--path <path>', 'only this absolute path and what is beneath it')
    .option('--diff <file>', 'print a unified diff of this one changed text file (absolute path) against its base instead')
    .option('--limit <n>', 'show at most n (default: all, paging through them)', integer)
    .action(
      run(async (id: string, opts: ChangesOptions) => {
        const client = connect(opts);
        if (opts.diff !== undefined) {
          const diff = await client.sandboxes.changeDiff(id, opts.diff);
          if (opts.json) return printJson({ path: opts.diff, diff });
          process.stdout.write(diff);
          return;
        }
        if (opts.limit !== undefined && opts.limit < 1) throw new Error(`--limit must be at least 1, got ${opts.limit}`);
        const changes: SandboxChange[] = [];
        let page: SandboxChangePage;
        let cursor: string | undefined;
        do {
          // Each page asks for no more than what is still wanted, so a cursor left over continues exactly there.
          const wanted = opts.limit === undefined ? 1000 : Math.min(opts.limit - changes.length, 1000);
          page = await client.sandboxes.changes(id, { path: opts.path, limit: wanted, cursor });
          changes.push(...page.changes);
          cursor = page.next_cursor;
        } while (cursor !== undefined && (opts.limit === undefined || changes.length < opts.limit));
        if (opts.json) return printJson({ base: page.base, changes, ...(cursor !== undefined ? { next_cursor: cursor } : {}) });
        if (!changes.length) return console.log(`no changes against ${page.base.kind} ${page.base.id}`);
        printTable(
          ['PATH', 'KIND', 'TYPE', 'SIZE'],
          changes.map((c) => [c.path, c.kind, c.type, c.type === 'file' ? bytes(c.size) : '-']),
        );
      }),
    );
}

/** `sandpit sandbox apply-changes <id> --from <other>`: copies another sandbox's changes into this one. */
export function applyChangesCommand() {
  return apiCommand('apply-changes', "copy another sandbox's changes into this one (both of the same template or snapshot)")
    .argument('<id>', 'the sandbox to change')
    .requiredOption('--from <sandbox>', 'the sandbox whose changes are copied')
    .option('--path <path>', 'only this absolute path and what is beneath it (repeatable; default all)', collect)
    .action(
      run(async (id: string, opts: ApplyOptions) => {
        const client = connect(opts);
        const result = await spin(`applying ${opts.from}'s changes to ${id}`, opts, () => client.sandboxes.applyChanges(id, opts.from, opts.path));
        if (opts.json) return printJson(result);
        for (const a of result.applied) console.log(`${a.kind.padEnd(9)}${a.path}`);
        for (const c of result.conflicts) console.log(`conflict ${c.path} (${c.kind} there; ${c.here.kind} ${c.here.path} here): not applied`);
        for (const s of result.skipped) console.log(`skipped  ${s.path}: ${s.reason}`);
        const left = result.conflicts.length + result.skipped.length;
        console.log(`applied ${result.applied.length} change${result.applied.length === 1 ? '' : 's'} to ${id}${left ? `, ${left} not applied` : ''}`);
      }),
    );
}
