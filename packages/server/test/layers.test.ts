import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { REPO as ROOT, SERVER_SRC as SRC, sourceFiles } from './helpers/source-files.ts';

interface Rule {
  allowed: Map<string, 'any' | 'types'>;
  everything: boolean;
}

/** The folder split by domain: each of its subfolders needs a row of its own. */
const DOMAINS = 'services/';

/** The table in docs/architecture.md: folder -> what it may import. */
async function rules(): Promise<{ byFolder: Map<string, Rule>; composition: Set<string>; leaf: Set<string> }> {
  const doc = await readFile(join(ROOT, 'docs/architecture.md'), 'utf8');
  const byFolder = new Map<string, Rule>();
  const composition = new Set<string>();
  const leaf = new Set<string>();
  for (const line of doc.split('\n')) {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    const key = /^`([^`]+)`$/.exec(cells[0] ?? '')?.[1];
    if (cells.length !== 3 || !key) continue;
    const allowed = new Map<string, 'any' | 'types'>();
    for (const m of cells[2]!.matchAll(/`([^`]+)`( \(types\))?/g)) allowed.set(m[1]!, m[2] ? 'types' : 'any');
    byFolder.set(key, { allowed, everything: cells[2] === 'everything' });
    if (key === 'composition' || key === 'leaf') for (const m of cells[1]!.matchAll(/`([^`/]+\.ts)`/g)) (key === 'leaf' ? leaf : composition).add(m[1]!);
  }
  return { byFolder, composition, leaf };
}

/** Relative imports and re-exports of a file, and whether each brings in types only. */
function imports(text: string): { spec: string; typesOnly: boolean }[] {
  const out: { spec: string; typesOnly: boolean }[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?([^;]*?)\s*from\s+'(\.[^']+)'/gms)) {
    const names = /\{([^}]*)\}/
      .exec(m[3]!)?.[1]
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const inlineTypes = !!names && names.length > 0 && names.every((n) => n.startsWith('type ')) && !/^\w/.test(m[3]!.replace(/\{[^}]*\}/, '').trim());
    out.push({ spec: m[4]!, typesOnly: !!m[2] || inlineTypes });
  }
  for (const m of text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)) out.push({ spec: m[1]!, typesOnly: false });
  return out;
}

test('every import in packages/server/src follows the layer table of docs/architecture.md', async () => {
  const { byFolder, composition, leaf } = await rules();
  const folders = [...byFolder.keys()].filter((k) => k.endsWith('/')).sort((a, b) => b.length - a.length);
  const keyOf = (file: string): string => {
    const rel = relative(SRC, file);
    if (!rel.includes('/')) {
      if (composition.has(rel)) return 'composition';
      assert.ok(leaf.has(rel), `${rel} is in neither the composition nor the leaf row of docs/architecture.md`);
      return 'leaf';
    }
    const folder = folders.find((f) => rel.startsWith(f));
    assert.ok(folder, `${rel}: its folder has no row in docs/architecture.md`);
    assert.ok(folder !== DOMAINS || !relative(DOMAINS, rel).includes('/'), `${rel}: its domain folder has no row in docs/architecture.md`);
    return folder;
  };
  // `services/**` allows the folder and every domain in it.
  const allowance = (rule: Rule, to: string) => rule.allowed.get(to) ?? [...rule.allowed].find(([k]) => k.endsWith('/**') && to.startsWith(k.slice(0, -2)))?.[1];
  const wrong: string[] = [];
  for (const file of await sourceFiles(SRC)) {
    const from = keyOf(file);
    const rule = byFolder.get(from)!;
    if (rule.everything) continue;
    for (const { spec, typesOnly } of imports(await readFile(file, 'utf8'))) {
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(SRC)) {
        wrong.push(`${relative(SRC, file)} imports ${spec}, outside the server package`);
        continue;
      }
      const to = keyOf(target);
      if (to === from) continue;
      const allowed = allowance(rule, to);
      if (allowed === 'any' || (allowed === 'types' && typesOnly)) continue;
      wrong.push(`${relative(SRC, file)} (${from}) imports ${relative(SRC, target)} (${to})${allowed === 'types' ? ' for more than types' : ''}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the domains of services/ use one another without a circle', async () => {
  const { byFolder } = await rules();
  const uses = (d: string) => [...byFolder.get(d)!.allowed.keys()].filter((k) => k.startsWith(DOMAINS) && k !== DOMAINS && byFolder.has(k));
  const circles = new Set<string>();
  const visit = (path: string[]) => {
    for (const next of uses(path.at(-1)!)) {
      const seen = path.indexOf(next);
      if (seen < 0) visit([...path, next]);
      // Each circle once, told from its first domain in sort order.
      else if (path.slice(seen).every((d) => d >= next)) circles.add([...path.slice(seen), next].join(' -> '));
    }
  };
  for (const d of byFolder.keys()) if (d.startsWith(DOMAINS) && d !== DOMAINS) visit([d]);
  assert.deepEqual([...circles], []);
});

test('the layer check sees what it must', () => {
  assert.deepEqual(imports("import type { A } from '../x.ts';\nimport { type B, C } from './y.ts';\nimport {\n  type D,\n} from './z.ts';\nexport { E } from './e.ts';"), [
    { spec: '../x.ts', typesOnly: true },
    { spec: './y.ts', typesOnly: false },
    { spec: './z.ts', typesOnly: true },
    { spec: './e.ts', typesOnly: false },
  ]);
});
