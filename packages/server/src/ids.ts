import { randomUUID } from 'node:crypto';
import { badRequest } from './errors.ts';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const SANDBOX_ID = new RegExp(`^(?:sb-[a-z0-9]+-)?(${UUID})$`, 'i');
const TAGGED = new RegExp(`^(?:sb-([a-z0-9]+)-)?(${UUID})$`, 'i');
const BARE_UUID = new RegExp(`^${UUID}$`, 'i');

export const newId = () => randomUUID();

let lastAt = 0;
let seq = 0;
/** A UUID in the version 7 layout (time first, then a per-process counter) that sorts in creation order, also within one millisecond. */
export function timeOrderedId(at: number): string {
  seq = at === lastAt ? seq + 1 : 0;
  lastAt = at;
  const hex = at.toString(16).padStart(12, '0').slice(-12) + (0x7000 + (seq & 0xfff)).toString(16) + randomUUID().replaceAll('-', '').slice(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Accepts both the bare UUID and the region-tagged form; returns the bare lowercase UUID. */
export function parseSandboxId(raw: string): string {
  const m = SANDBOX_ID.exec(raw);
  if (!m?.[1]) throw badRequest(`'${raw.slice(0, 100)}' is not a sandbox id (a UUID or sb-<region>-<uuid>)`);
  return m[1].toLowerCase();
}

/** The bare id and, when tagged, its region; undefined when it is no sandbox id (the route answers that). */
export function parseSandboxIdLoose(raw: string): { id: string; region?: string } | undefined {
  const m = TAGGED.exec(raw);
  if (!m?.[2]) return undefined;
  return m[1] ? { id: m[2].toLowerCase(), region: m[1].toLowerCase() } : { id: m[2].toLowerCase() };
}

export function parseUuid(raw: string, what: string): string {
  if (!BARE_UUID.test(raw)) throw badRequest(`'${raw.slice(0, 100)}' is not a valid ${what} (a UUID)`);
  return raw.toLowerCase();
}

export const isUuid = (raw: string) => BARE_UUID.test(raw);

/** The per-sandbox host name of the data plane: `<sandbox id>.sandbox.<public host>`. */
export const SANDBOX_HOST = /^([^.]+)\.sandbox\./i;

export const taggedSandboxId = (region: string, id: string) => `sb-${region}-${id}`;
