import { isIP } from 'node:net';
import { badRequest } from '../../errors.ts';
import type { NetworkRules, SandboxRecord } from '../../store/sandboxes.ts';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const RESERVED_METADATA = /^(platform\.|_platform)/i;

/** Metadata limits the schema cannot express (byte sizes, reserved keys). */
export function checkMetadata(md: Record<string, string>): void {
  for (const [k, v] of Object.entries(md)) {
    if (k.length === 0) throw badRequest('metadata keys must not be empty');
    if (bytes(k) > 256) throw badRequest(`metadata key '${k.slice(0, 32)}...' is longer than 256 bytes`);
    if (bytes(v) > 2048) throw badRequest(`metadata value of '${k}' is longer than 2048 bytes`);
    if (RESERVED_METADATA.test(k)) throw badRequest(`metadata key '${k}' is reserved (prefixes platform. and _platform)`);
  }
  if (bytes(JSON.stringify(md)) > 16384) throw badRequest('metadata is larger than 16384 bytes serialized');
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function checkEnv(env: Record<string, string>, what = 'env'): void {
  let total = 0;
  for (const [k, v] of Object.entries(env)) {
    if (!ENV_NAME.test(k) || k.length > 256) throw badRequest(`${what}: '${k.slice(0, 64)}' is not a valid environment variable name`);
    if (v.includes('\0')) throw badRequest(`${what}: the value of ${k} contains a NUL byte`);
    total += bytes(k) + bytes(v);
  }
  if (total > 131072) throw badRequest(`${what} is larger than 128 KiB`);
}

const SECRET_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function checkSecretBindings(bindings: Record<string, string>): void {
  for (const [envName, secret] of Object.entries(bindings)) {
    if (!ENV_NAME.test(envName)) throw badRequest(`secrets: '${envName.slice(0, 64)}' is not a valid environment variable name`);
    if (!SECRET_NAME.test(secret)) throw badRequest(`secrets: '${secret.slice(0, 64)}' is not a valid secret name`);
  }
}

const DOMAIN = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/** Normalizes a CIDR (a bare address becomes /32 or /128); undefined when it is not one. */
export function parseCidr(raw: string): string | undefined {
  const [addr, prefix, ...rest] = raw.trim().split('/');
  if (rest.length > 0 || !addr) return undefined;
  const family = isIP(addr);
  if (family === 0) return undefined;
  const max = family === 4 ? 32 : 128;
  if (prefix === undefined) return `${addr.toLowerCase()}/${max}`;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return undefined;
  return `${addr.toLowerCase()}/${Number(prefix)}`;
}

/** Validates and normalizes egress rules; an empty rule set means defaults (null). */
export function normalizeNetwork(n: NetworkRules): NetworkRules | null {
  const out: NetworkRules = {};
  if (n.deny_out !== undefined) {
    out.deny_out = n.deny_out.map((entry) => {
      const cidr = parseCidr(entry);
      if (!cidr) throw badRequest(`network.deny_out takes CIDRs only; '${entry.slice(0, 100)}' is not one`);
      return cidr;
    });
  }
  if (n.allow_out !== undefined) {
    out.allow_out = n.allow_out.map((entry) => {
      const cidr = parseCidr(entry);
      if (cidr) return cidr;
      const domain = entry.trim().toLowerCase();
      if (DOMAIN.test(domain)) return domain;
      throw badRequest(`network.allow_out: '${entry.slice(0, 100)}' is neither a CIDR nor a domain name (*.<domain> allowed)`);
    });
  }
  if (out.allow_out === undefined && out.deny_out === undefined) return null;
  return out;
}

/** A sandbox now paused: its active session ends and the auto-delete deadline, if any, is armed. */
export function markPaused(rec: SandboxRecord, now: number): void {
  rec.status = 'paused';
  rec.pausedAt = now;
  rec.activeSince = null;
  rec.autoPauseAt = null;
  rec.autoDeleteAt = rec.autoDeleteSeconds === null ? null : now + rec.autoDeleteSeconds * 1000;
  rec.updatedAt = now;
}
