import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TemplateCapture } from '../../store/templates.ts';

/**
 * The engine captures of curated templates (`platform/...`), by name. Curated templates have no store
 * row (each host builds them from their recipes), so their captures are kept in a file of the data dir.
 */
export class CuratedCaptures {
  readonly #file: string;
  #all: Record<string, TemplateCapture> = {};

  private constructor(file: string) {
    this.#file = file;
  }

  static async load(file: string): Promise<CuratedCaptures> {
    const c = new CuratedCaptures(file);
    const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '{}';
      throw err;
    });
    c.#all = JSON.parse(text) as Record<string, TemplateCapture>;
    return c;
  }

  entries(): [string, TemplateCapture][] {
    return Object.entries(this.#all);
  }

  /** Records (or with null, forgets) the capture of template `name`: written aside, then renamed, so a crash leaves the old file or the new. */
  async set(name: string, capture: TemplateCapture | null): Promise<void> {
    const next = { ...this.#all };
    if (capture) next[name] = capture;
    else delete next[name];
    await mkdir(dirname(this.#file), { recursive: true });
    await writeFile(`${this.#file}.tmp`, JSON.stringify(next));
    await rename(`${this.#file}.tmp`, this.#file);
    this.#all = next;
  }
}
