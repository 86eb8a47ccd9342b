import { readdir, readFile } from 'node:fs/promises';

const DEFAULT_MIRROR = 'http://deb.debian.org/debian';

/** The host's configured Debian mirror for `suite` (not the security archive). */
export async function debianMirror(suite: string): Promise<string> {
  const candidates: string[] = [];
  const dir = '/etc/apt/sources.list.d';
  const files = await readdir(dir).catch(() => [] as string[]);
  for (const f of files.filter((n) => n.endsWith('.sources')).sort()) {
    const text = await readFile(`${dir}/${f}`, 'utf8').catch(() => '');
    for (const stanza of text.split(/\n\s*\n/)) {
      const field = (name: string): string => stanza.match(new RegExp(`^${name}:\\s*(.+)$`, 'mi'))?.[1]?.trim() ?? '';
      if (!field('Types').split(/\s+/).includes('deb')) continue;
      if (!field('Suites').split(/\s+/).includes(suite)) continue;
      candidates.push(...field('URIs').split(/\s+/).filter(Boolean));
    }
  }
  const list = await readFile('/etc/apt/sources.list', 'utf8').catch(() => '');
  for (const line of list.split('\n')) {
    const m = line.trim().match(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/);
    if (m && m[2] === suite && m[1]) candidates.push(m[1]);
  }
  return candidates.find((u) => !/security/.test(u)) ?? DEFAULT_MIRROR;
}
