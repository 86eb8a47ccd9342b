import { notFound } from '../errors.ts';
import { ensureBaseTemplate } from '../runtime/templates/base-template.ts';
import type { ResourcesRecord } from '../store/sandboxes.ts';

export interface TemplateInfo {
  id: string;
  rootfs: string;
  resources: ResourcesRecord;
  env: Record<string, string>;
}

export type BuildProgress = { phase: string; done: number; total: number; line?: string };

export const BASE_TEMPLATE = 'platform/base';
const BASE_RESOURCES: ResourcesRecord = { vcpu_count: 1, memory_mib: 1024, disk_mib: 4096 };

/** Resolves a template reference to a root filesystem; builds the base template on first use. */
export class TemplateService {
  readonly imageDir: string;
  #base: Promise<string> | undefined;
  #progress: ((p: BuildProgress) => void) | undefined;

  constructor(imageDir: string, onProgress?: (p: BuildProgress) => void) {
    this.imageDir = imageDir;
    this.#progress = onProgress;
  }

  /** Starts (or joins) the base template build. */
  base(): Promise<string> {
    if (!this.#base) {
      this.#base = ensureBaseTemplate(this.imageDir, this.#progress);
      this.#base.catch(() => {
        this.#base = undefined;
      });
    }
    return this.#base;
  }

  async resolve(_teamId: string, ref: string | undefined): Promise<TemplateInfo> {
    const id = ref ?? BASE_TEMPLATE;
    if (id !== BASE_TEMPLATE) throw notFound(`template '${id.slice(0, 128)}' not found`);
    return { id, rootfs: await this.base(), resources: { ...BASE_RESOURCES }, env: {} };
  }
}
