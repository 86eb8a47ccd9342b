import type { SandboxSpec } from '../driver.ts';

/** What both drivers keep on disk per sandbox so that a restarted server can manage it. */
export interface LayeredSandboxMeta {
  id: string;
  templateRoot: string;
  templateLayers?: string[];
  hostname: string;
  resources: SandboxSpec['resources'];
  subvolId?: number;
  /** crun: the host id its root is mapped to (its own range); absent for sandboxes made before ranges were per sandbox. */
  idBase?: number;
  createdAt: string;
}
