/** Small helpers every benchmark prints with: medians and ratios, never assertions. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function sample(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await timeIt(fn));
  return out;
}

export function report(name: string, xs: number[], target?: string): void {
  const line = `${name.padEnd(44)} median ${median(xs).toFixed(2).padStart(8)} ms   p90 ${percentile(xs, 90).toFixed(2).padStart(8)} ms   n=${xs.length}`;
  console.log(target ? `${line}   (target ${target})` : line);
}

export function ratio(name: string, ours: number[], raw: number[]): void {
  console.log(`${name.padEnd(44)} ratio ${(median(ours) / median(raw)).toFixed(2)}x of raw`);
}
