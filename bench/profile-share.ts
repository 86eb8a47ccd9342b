/**
 * What share of a process's busy CPU went to some code, read from its V8 CPU profile (`node --cpu-prof`).
 * A share is a ratio of samples taken at the same moments, so it holds on a shared host whose speed
 * drifts between runs, where throughput and CPU time per request do not.
 */
import { readFile } from 'node:fs/promises';

/** What `node --cpu-prof` writes, as far as the benches read it. */
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Share {
  /** Busy CPU seconds sampled (idle excluded) after the skipped start. */
  busySeconds: number;
  /** Of busy: in code whose URL `matches` (a native or builtin frame counts for the JavaScript that called it). */
  matched: number;
  /** Of busy: the garbage collector. */
  gc: number;
}

/** `skipMs`: the profile's first milliseconds (start-up, warm-up) are left out. */
export async function profileShare(file: string, matches: (url: string) => boolean, skipMs = 0): Promise<Share> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // The JavaScript a sample belongs to: its own frame, or the nearest caller that has a URL.
  const owner = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const url = nodes.get(at)!.callFrame.url;
      if (url) return url;
    }
    return '';
  };
  let t = 0;
  let busy = 0;
  let matched = 0;
  let gc = 0;
  for (const [i, id] of profile.samples.entries()) {
    const us = profile.timeDeltas[i] ?? 0;
    t += us;
    if (t < skipMs * 1000) continue;
    const name = nodes.get(id)!.callFrame.functionName;
    if (name === '(idle)') continue;
    busy += us;
    if (name === '(garbage collector)') gc += us;
    else if (matches(owner(id))) matched += us;
  }
  return { busySeconds: busy / 1e6, matched: busy ? matched / busy : 0, gc: busy ? gc / busy : 0 };
}
