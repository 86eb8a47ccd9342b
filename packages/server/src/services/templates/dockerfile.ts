import { badRequest } from '../../errors.ts';
import type { TemplateStep } from '../../schemas/template.ts';

/** A Dockerfile in Sandpit's subset, as a template build: a base (image or template) and steps. */
export interface DockerfileBuild {
  /** The FROM operand: an image reference or a template name. */
  from: string;
  steps: TemplateStep[];
  /** From CMD/ENTRYPOINT (exec form is shell-quoted). */
  startCmd?: string;
}

interface Instruction {
  line: number;
  keyword: string;
  args: string;
  heredocs: { name: string; body: string }[];
}

const SUPPORTED = new Set(['FROM', 'RUN', 'COPY', 'ENV', 'WORKDIR', 'USER', 'ARG', 'CMD', 'ENTRYPOINT']);
const HEREDOC = /<<(-?)(["']?)([A-Za-z_][A-Za-z0-9_]*)\2/g;

function fail(line: number, why: string): never {
  throw badRequest(`dockerfile line ${line}: ${why}`);
}

/** Splits the text into instructions: comments dropped, `\` continuations joined, heredoc bodies attached. */
function instructions(text: string): Instruction[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const out: Instruction[] = [];
  let i = 0;
  while (i < lines.length) {
    const start = i + 1;
    let l = lines[i++]!;
    if (/^\s*(#.*)?$/.test(l)) continue;
    while (/\\\s*$/.test(l) && i < lines.length) {
      const next = lines[i++]!;
      if (/^\s*#/.test(next)) continue;
      l = l.replace(/\\\s*$/, '') + next;
    }
    const m = /^\s*([A-Za-z]+)(?:\s+([\s\S]*))?$/.exec(l);
    if (!m) fail(start, `'${l.trim().slice(0, 60)}' is not an instruction`);
    const keyword = m[1]!.toUpperCase();
    const args = (m[2] ?? '').trim();
    const heredocs: Instruction['heredocs'] = [];
    if (keyword === 'RUN' || keyword === 'COPY') {
      for (const h of args.matchAll(HEREDOC)) {
        const body: string[] = [];
        for (;;) {
          if (i >= lines.length) fail(start, `heredoc '${h[3]}' is not closed`);
          const b = lines[i++]!;
          const bare = h[1] ? b.replace(/^\t+/, '') : b;
          if (bare === h[3]) break;
          body.push(bare);
        }
        heredocs.push({ name: h[3]!, body: body.length ? `${body.join('\n')}\n` : '' });
      }
    }
    out.push({ line: start, keyword, args, heredocs });
  }
  return out;
}

/** Replaces $NAME, ${NAME}, ${NAME:-word} and ${NAME:+word} (a `\$` stays a literal `$`). */
function substitute(s: string, vars: Record<string, string>): string {
  return s.replace(/\\\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (all, braced, op, word, bare) => {
    if (all === '\\$') return '$';
    const name = (braced ?? bare) as string;
    const v = vars[name];
    if (op === '-') return v ? v : (word as string);
    if (op === '+') return v ? (word as string) : '';
    return v ?? '';
  });
}

/** An argument as /bin/sh reads it back unchanged. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** A JSON array (exec form), or undefined for the shell form. */
function execForm(args: string, line: number): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  try {
    const v = JSON.parse(args) as unknown;
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  } catch {
    // Docker runs a line that only looks like JSON in the shell form.
    return undefined;
  }
  fail(line, 'the exec form must be a JSON array of strings');
}

/** `NAME=value ...` pairs (or the legacy `NAME value`), with quotes removed. */
function pairs(args: string, line: number, vars: Record<string, string>, legacy: boolean): [string, string][] {
  if (legacy && !/^[^\s=]+=/.test(args)) {
    const m = /^(\S+)\s+([\s\S]*)$/.exec(args);
    if (!m) fail(line, 'expected NAME=value');
    return [[m[1]!, substitute(m[2]!, vars)]];
  }
  const out: [string, string][] = [];
  const re = /([^\s=]+)(?:=("(?:[^"\\]|\\.)*"|'[^']*'|(?:[^\s\\]|\\.)*))?(?:\s+|$)/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < args.length && (m = re.exec(args))) {
    pos = re.lastIndex;
    let v = m[2] ?? '';
    if (v.startsWith('"')) v = substitute(v.slice(1, -1).replace(/\\(.)/g, '$1'), vars);
    else if (v.startsWith("'")) v = v.slice(1, -1);
    else v = substitute(v.replace(/\\(.)/g, '$1'), vars);
    out.push([m[1]!, m[2] === undefined ? '\0' : v]);
  }
  if (pos < args.length) fail(line, `cannot read '${args.slice(pos, pos + 40)}' as NAME=value`);
  return out;
}

function flags(args: string, line: number, allowed: string[]): { flags: Record<string, string>; rest: string } {
  const f: Record<string, string> = {};
  let rest = args;
  for (;;) {
    const m = /^--([a-z-]+)=(\S+)\s+/.exec(rest);
    if (!m) break;
    if (!allowed.includes(m[1]!)) fail(line, `--${m[1]} is not supported here`);
    f[m[1]!] = m[2]!;
    rest = rest.slice(m[0].length);
  }
  if (/^--/.test(rest)) fail(line, `option '${rest.split(/\s/)[0]!.slice(0, 40)}' is not supported`);
  return { flags: f, rest };
}

function userOf(name: string): 'root' | 'user' {
  const u = name.split(':')[0]!;
  return u === 'root' || u === '0' ? 'root' : 'user';
}

/**
 * Reads a Dockerfile in the subset Sandpit builds: one FROM (an image or a
 * template), then RUN, COPY of inline heredocs, ENV, WORKDIR, USER, ARG, CMD
 * and ENTRYPOINT. Anything else is a bad_request naming its line.
 */
export function parseDockerfile(text: string): DockerfileBuild {
  // ARGs before FROM are for FROM only; after it, `ARG NAME` without a value brings one in (as in Docker).
  const globalArgs: Record<string, string> = {};
  const args: Record<string, string> = {};
  const env: Record<string, string> = {};
  const steps: TemplateStep[] = [];
  let from: string | undefined;
  let user: 'root' | 'user' = 'root';
  let workdir = '/';
  let entrypoint: { exec?: string[]; shell?: string } | undefined;
  let cmd: { exec?: string[]; shell?: string } | undefined;

  for (const ins of instructions(text)) {
    const { line, keyword } = ins;
    if (!SUPPORTED.has(keyword)) fail(line, `${keyword} is not supported (Sandpit builds FROM, RUN, COPY of inline heredocs, ENV, WORKDIR, USER, ARG, CMD, ENTRYPOINT)`);
    if (!from && keyword !== 'FROM' && keyword !== 'ARG') fail(line, `${keyword} before FROM`);
    const vars = { ...args, ...env };
    switch (keyword) {
      case 'FROM': {
        if (from) fail(line, 'a second FROM: multi-stage builds are not supported');
        const { flags: f, rest } = flags(ins.args, line, ['platform']);
        if (f.platform && substitute(f.platform, globalArgs) !== 'linux/amd64') fail(line, `--platform ${f.platform}: only linux/amd64 is built`);
        const m = /^(\S+)(?:\s+AS\s+\S+)?$/i.exec(rest);
        if (!m) fail(line, 'expected FROM <image or template> [AS <name>]');
        from = substitute(m[1]!, globalArgs);
        if (!from) fail(line, 'FROM names nothing');
        break;
      }
      case 'ARG': {
        const scope = from ? args : globalArgs;
        for (const [k, v] of pairs(ins.args, line, from ? vars : globalArgs, false)) scope[k] = v === '\0' ? (from ? (globalArgs[k] ?? '') : '') : v;
        break;
      }
      case 'ENV': {
        const kv = pairs(ins.args, line, vars, true);
        for (const [k, v] of kv) {
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) fail(line, `'${k.slice(0, 40)}' is not a valid variable name`);
          if (v === '\0') fail(line, `ENV ${k} has no value`);
          env[k] = v;
        }
        steps.push({ type: 'env', env: Object.fromEntries(kv) });
        break;
      }
      case 'WORKDIR': {
        const p = substitute(ins.args.replace(/^["']|["']$/g, ''), vars);
        workdir = p.startsWith('/') ? p : `${workdir.replace(/\/$/, '')}/${p}`;
        steps.push({ type: 'workdir', path: workdir });
        break;
      }
      case 'USER':
        user = userOf(substitute(ins.args, vars));
        break;
      case 'RUN': {
        const { rest } = flags(ins.args, line, []);
        let command: string;
        if (ins.heredocs.length > 1) fail(line, 'RUN with more than one heredoc is not supported');
        if (ins.heredocs.length === 1) {
          // `RUN <<EOF` runs the body as a script; `RUN cmd <<EOF` hands it to cmd as the shell would.
          const h = ins.heredocs[0]!;
          command = rest.replace(HEREDOC, '').trim() ? `${rest}\n${h.body}${h.name}` : h.body;
        } else {
          const exec = execForm(rest, line);
          command = exec ? exec.map(shellQuote).join(' ') : rest;
        }
        if (!command.trim()) fail(line, 'RUN has no command');
        // Docker hands ARG values to RUN as environment variables (not kept in the image).
        const argEnv = Object.entries(args).filter(([k]) => !(k in env));
        if (argEnv.length) command = `export ${argEnv.map(([k, v]) => `${k}=${shellQuote(v)}`).join(' ')}\n${command}`;
        steps.push({ type: 'run', command, user });
        break;
      }
      case 'COPY': {
        const { flags: f, rest } = flags(ins.args, line, ['chmod', 'chown']);
        if (ins.heredocs.length !== 1) fail(line, 'COPY from a build context is not supported: Sandpit builds COPY of one inline heredoc (COPY <<EOF /path)');
        const dest = substitute(rest.replace(HEREDOC, '').trim(), vars);
        if (!dest || /\s/.test(dest)) fail(line, 'COPY <<EOF needs exactly one destination path');
        let path = dest.startsWith('/') ? dest : `${workdir.replace(/\/$/, '')}/${dest}`;
        if (path.endsWith('/')) path += ins.heredocs[0]!.name;
        if (f.chmod && !/^[0-7]{3,4}$/.test(f.chmod)) fail(line, `--chmod=${f.chmod} is not an octal mode`);
        steps.push({
          type: 'copy',
          path,
          content_base64: Buffer.from(ins.heredocs[0]!.body).toString('base64'),
          ...(f.chmod ? { mode: f.chmod } : {}),
          user: f.chown ? userOf(f.chown) : 'root',
        });
        break;
      }
      case 'CMD':
      case 'ENTRYPOINT': {
        const exec = execForm(ins.args, line);
        const v = exec ? { exec } : { shell: ins.args };
        if (keyword === 'CMD') cmd = v;
        else entrypoint = v;
        break;
      }
    }
  }
  if (!from) throw badRequest('dockerfile: no FROM');
  const startCmd = startCommand(entrypoint, cmd);
  return { from, steps, ...(startCmd ? { startCmd } : {}) };
}

/** How Docker combines them: a shell-form ENTRYPOINT ignores CMD; an exec-form one takes CMD as arguments. */
function startCommand(entrypoint: { exec?: string[]; shell?: string } | undefined, cmd: { exec?: string[]; shell?: string } | undefined): string | undefined {
  if (entrypoint?.shell) return entrypoint.shell;
  const cmdArgv = cmd?.exec ? cmd.exec.map(shellQuote).join(' ') : cmd?.shell;
  if (entrypoint?.exec) return [entrypoint.exec.map(shellQuote).join(' '), entrypoint.exec.length ? (cmdArgv ?? '') : ''].filter(Boolean).join(' ') || undefined;
  return cmdArgv || undefined;
}
