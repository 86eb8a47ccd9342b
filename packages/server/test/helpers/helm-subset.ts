import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

/**
 * Renders a Helm chart with the part of Go templates and Helm's functions that deploy/helm/sandpit uses,
 * because no helm binary can be installed here: `{{ }}` with `{{-`/`-}}` trimming, `if`/`else`/`end`,
 * `define` and `include`, fields of `.Values`, `.Release`, `.Chart` and `.`, string literals, numbers, and
 * the functions quote, nindent, toYaml, required and not, in pipelines. Anything else in a template is
 * an error, so the chart cannot drift outside what this renders without the test failing.
 */

type Ctx = Record<string, unknown>;
type Node = { text: string } | { action: string } | { cond: string; yes: Node[]; no: Node[] };

export interface Rendered {
  /** Template file name -> its rendered text. */
  files: Map<string, string>;
  /** Every YAML document of every file, in file-name order. */
  objects: Record<string, unknown>[];
}

export function renderChart(chartDir: string, overrides: Record<string, unknown>, release = { Name: 'sandpit', Namespace: 'sandpit' }): Rendered {
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
  const values = merge(parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Ctx, overrides);
  const ctx: Ctx = { Values: values, Release: release, Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion } };
  const dir = join(chartDir, 'templates');
  const names = readdirSync(dir).sort();
  const defines = new Map<string, Node[]>();
  const parsed = new Map(names.map((n) => [n, parseTemplate(readFileSync(join(dir, n), 'utf8'), defines)]));
  const files = new Map<string, string>();
  const objects: Record<string, unknown>[] = [];
  for (const name of names) {
    if (name.startsWith('_')) continue;
    const text = run(parsed.get(name)!, ctx, defines);
    files.set(name, text);
    for (const doc of text.split(/^---$/m)) {
      const obj = parse(doc) as Record<string, unknown> | null;
      if (obj) objects.push(obj);
    }
  }
  return { files, objects };
}

function merge(base: Ctx, over: Ctx): Ctx {
  const out: Ctx = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isMap(v) && isMap(base[k]) ? merge(base[k] as Ctx, v) : v;
  return out;
}

const isMap = (v: unknown): v is Ctx => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Splits into text and actions, applying the trim markers, then nests if/else/end and collects defines. */
function parseTemplate(src: string, defines: Map<string, Node[]>): Node[] {
  const flat: Node[] = [];
  const re = /\{\{(-?)\s*(.*?)\s*(-?)\}\}/gs;
  let at = 0;
  let trimNext = false;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    let text = src.slice(at, m.index);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (m[1]) text = text.replace(/\s+$/, '');
    if (text) flat.push({ text });
    flat.push({ action: m[2]! });
    trimNext = m[3] === '-';
    at = re.lastIndex;
  }
  const tail = trimNext ? src.slice(at).replace(/^\s+/, '') : src.slice(at);
  if (tail) flat.push({ text: tail });

  let i = 0;
  const block = (closers: string[]): { nodes: Node[]; closer: string } => {
    const nodes: Node[] = [];
    while (i < flat.length) {
      const n = flat[i++]!;
      if (!('action' in n)) {
        nodes.push(n);
        continue;
      }
      const a = n.action;
      if (closers.includes(a)) return { nodes, closer: a };
      if (a.startsWith('if ')) {
        const yes = block(['else', 'end']);
        const no = yes.closer === 'else' ? block(['end']).nodes : [];
        nodes.push({ cond: a.slice(3), yes: yes.nodes, no });
      } else if (a.startsWith('define ')) {
        defines.set(literal(a.slice(7)), block(['end']).nodes);
      } else if (a === 'end' || a === 'else' || /^(range|with|template|block|\/\*)/.test(a)) {
        throw new Error(`helm-subset: '{{ ${a} }}' is not supported here`);
      } else {
        nodes.push(n);
      }
    }
    if (closers.length) throw new Error(`helm-subset: missing {{ end }}`);
    return { nodes, closer: '' };
  };
  return block([]).nodes;
}

function run(nodes: Node[], ctx: Ctx, defines: Map<string, Node[]>): string {
  let out = '';
  for (const n of nodes) {
    if ('text' in n) out += n.text;
    else if ('cond' in n) out += run(truthy(pipeline(n.cond, ctx, defines)) ? n.yes : n.no, ctx, defines);
    else out += String(pipeline(n.action, ctx, defines) ?? '');
  }
  return out;
}

function pipeline(src: string, ctx: Ctx, defines: Map<string, Node[]>): unknown {
  let value: unknown;
  let first = true;
  for (const part of splitOutsideQuotes(src, '|')) {
    const words = tokens(part);
    const args = words.slice(1).map((w) => operand(w, ctx));
    if (!first) args.push(value);
    const head = words[0]!;
    value = FUNCTIONS[head] ? FUNCTIONS[head](args, ctx, defines) : first && words.length === 1 ? operand(head, ctx) : fail(`'${part.trim()}'`);
    first = false;
  }
  return value;
}

const FUNCTIONS: Record<string, (args: unknown[], ctx: Ctx, defines: Map<string, Node[]>) => unknown> = {
  quote: ([v]) => JSON.stringify(String(v ?? '')),
  nindent: ([n, v]) => `\n${indent(String(v), Number(n))}`,
  toYaml: ([v]) => stringify(v).trimEnd(),
  required: ([msg, v]) => (truthy(v) ? v : fail(`required: ${String(msg)}`)),
  not: ([v]) => !truthy(v),
  include: ([name, scope], _ctx, defines) => {
    const body = defines.get(String(name)) ?? fail(`no define '${String(name)}'`);
    return run(body, scope as Ctx, defines);
  },
};

function operand(word: string, ctx: Ctx): unknown {
  if (word.startsWith('"')) return literal(word);
  if (/^-?\d+$/.test(word)) return Number(word);
  if (word === '.') return ctx;
  if (word.startsWith('.'))
    return word
      .slice(1)
      .split('.')
      .reduce<unknown>((v, k) => (isMap(v) ? v[k] : undefined), ctx);
  return fail(`'${word}'`);
}

function literal(word: string): string {
  if (!/^"([^"\\]|\\.)*"$/.test(word)) fail(`'${word}' is not a string literal`);
  return JSON.parse(word) as string;
}

function tokens(src: string): string[] {
  return src.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
}

function splitOutsideQuotes(src: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"' && src[i - 1] !== '\\') quoted = !quoted;
    if (c === sep && !quoted) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return Object.keys(v).length > 0;
  return Boolean(v);
}

function indent(text: string, n: number): string {
  const pad = ' '.repeat(n);
  return text
    .split('\n')
    .map((l) => (l ? pad + l : l))
    .join('\n');
}

function fail(what: string): never {
  throw new Error(`helm-subset: ${what} is not supported or failed`);
}
