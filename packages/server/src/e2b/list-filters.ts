import { badRequest } from '../errors.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';
import { templateRef } from './sandbox-view.ts';

/** E2B's list filters Sandpit's own list has no counterpart for: `template`, `startedAfter`/`startedBefore` and `order`. */
export interface ListFilters {
  template?: string;
  startedAfter?: string;
  startedBefore?: string;
  order?: string;
}

function instant(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw badRequest(`${name} must be an RFC 3339 timestamp`);
  return t;
}

/** Applied to one page of Sandpit's keyset list (ordered by creation), so a filtered page may hold fewer than `limit`. */
export function applyListFilters(items: SandboxRecord[], f: ListFilters): SandboxRecord[] {
  if (f.order !== undefined && f.order !== 'asc' && f.order !== 'desc') throw badRequest("order must be 'asc' or 'desc'");
  const after = instant(f.startedAfter, 'startedAfter');
  const before = instant(f.startedBefore, 'startedBefore');
  const template = f.template ? templateRef(f.template) : undefined;
  const out = items.filter((r) => (template === undefined || r.templateId === template) && (after === undefined || r.createdAt >= after) && (before === undefined || r.createdAt <= before));
  if (f.order) out.sort((a, b) => (f.order === 'asc' ? a.createdAt - b.createdAt : b.createdAt - a.createdAt));
  return out;
}
