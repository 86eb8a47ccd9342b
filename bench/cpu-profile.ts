/**
 * Summarizes V8 CPU profiles (`node --cpu-prof`): the functions with the most self time, and self
 * time by where the code lives (our source, each dependency, Node's internals), across every file given.
 *
 *   node bench/cpu-profile.ts PROFILE.cpuprofile... [--top 30]
 */
import { readFile } from 'node:fs/promises';
import type { Profile } from './profile-share.ts';

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 30;
const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
let total = 0;

/** Where a frame's code lives: a dependency by package name, our packages by path, else Node or the engine. */
function place(url: string): string {
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dep) return dep[1]!;
  const ours = /\/packages\/([^/]+\/src\/[^/]+)/.exec(url);
  if (ours) return ours[1]!;
  if (url.startsWith('node:')) return url;
  return url === '' ? '(native, gc, idle)' : url;
}

for (const file of args) {
  const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const [i, id] of profile.samples.entries()) {
    const frame = nodes.get(id)!.callFrame;
    const us = profile.timeDeltas[i] ?? 0;
    total += us;
    const fn = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|packages)\//, '$1/')}:${frame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byPlace.set(place(frame.url), (byPlace.get(place(frame.url)) ?? 0) + us);
  }
}

const print = (title: string, m: Map<string, number>) => {
  console.log(`\n== ${title} (of ${(total / 1e6).toFixed(1)} s sampled)`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
};
print('self time by place', byPlace);
print('self time by function', byFunction);
