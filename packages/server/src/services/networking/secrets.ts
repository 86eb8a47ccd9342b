import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { newProxyToken, type TokenBinding } from '../../network/token-swap.ts';
import type { CreateSecretBody } from '../../schemas/secret.ts';
import type { SecretRecord, SecretStore } from '../../store/secrets.ts';
import type { Principal } from '../access/principal.ts';
import { parseCidr } from '../sandboxes/sandbox-rules.ts';

const SECRET_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const HOST = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_VALUE_BYTES = 65536;
/** Variables the platform sets itself (CA trust, paths) or that change how every process runs. */
const RESERVED_ENV = new Set([
  'PATH',
  'HOME',
  'HOSTNAME',
  'USER',
  'SHELL',
  'PWD',
  'LANG',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
]);

/** The 32-byte key: SANDPIT_SECRETS_KEY (base64 or hex), else a key file created 0600 on first start. */
export async function loadSecretsKey(keyFile: string, fromEnv: string | undefined): Promise<Buffer> {
  if (fromEnv) {
    const key = /^[0-9a-f]{64}$/i.test(fromEnv) ? Buffer.from(fromEnv, 'hex') : Buffer.from(fromEnv, 'base64');
    if (key.length !== 32) throw new Error('SANDPIT_SECRETS_KEY must be 32 bytes, as 64 hex digits or base64');
    return key;
  }
  const existing = await readFile(keyFile, 'utf8').catch(() => undefined);
  if (existing) return Buffer.from(existing.trim(), 'base64');
  await mkdir(dirname(keyFile), { recursive: true });
  const key = randomBytes(32);
  // 'wx' fails rather than overwrite a key another process wrote meanwhile.
  await writeFile(keyFile, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

interface Binding {
  env: string;
  secretId: string;
}

/**
 * Team secrets, encrypted at rest (AES-256-GCM, the row id as associated data so a ciphertext
 * cannot be moved to another row), and their bindings to sandboxes as proxy tokens. Bindings are
 * by secret id: revoking and re-creating a name leaves old bindings revoked.
 */
export class SecretsService {
  readonly #store: SecretStore;
  readonly #key: Buffer;
  readonly #clock: Clock;
  /** sandbox id -> token -> binding */
  readonly #bySandbox = new Map<string, Map<string, Binding>>();
  readonly #secrets = new Map<string, SecretRecord>();
  #syncing: Promise<void> | undefined;

  constructor(store: SecretStore, key: Buffer, clock: Clock) {
    this.#store = store;
    this.#key = key;
    this.#clock = clock;
  }

  /** Loads the bindings of live sandboxes (after a restart) and drops those of gone ones. */
  async load(): Promise<void> {
    await this.#store.deleteOrphanBindings();
    const bindings = await this.#store.liveBindings();
    for (const s of await this.#store.byIds([...new Set(bindings.map((b) => b.secretId))])) this.#secrets.set(s.id, s);
    for (const b of bindings) this.#tokens(b.sandboxId).set(b.token, { env: b.env, secretId: b.secretId });
  }

  async create(p: Principal, input: CreateSecretBody): Promise<SecretRecord> {
    if (!SECRET_NAME.test(input.name)) throw badRequest('name must be 1 to 64 characters of A-Z a-z 0-9 _ . -');
    if (input.value.length === 0) throw badRequest('value must not be empty');
    if (Buffer.byteLength(input.value) > MAX_VALUE_BYTES) throw badRequest(`value is larger than ${MAX_VALUE_BYTES} bytes`);
    // The value is written into HTTP headers at egress.
    if (/[\r\n\0]/.test(input.value)) throw badRequest('value must not contain CR, LF or NUL');
    const hosts = (input.allowed_hosts ?? []).map((h) => {
      const host = h.trim().toLowerCase();
      if (!HOST.test(host) && !parseCidr(host)?.match(/\/(32|128)$/)) throw badRequest(`allowed_hosts: '${h.slice(0, 100)}' is not a host name (*.<domain> allowed) or an IP address`);
      return host;
    });
    const id = newId();
    const rec: SecretRecord = { id, teamId: p.teamId, name: input.name, ciphertext: this.#encrypt(id, input.value), allowedHosts: hosts, createdAt: this.#clock.now(), revokedAt: null };
    if (!(await this.#store.insert(rec))) throw conflict(`a secret named '${input.name}' already exists; delete it first to replace it`);
    return rec;
  }

  list(p: Principal): Promise<SecretRecord[]> {
    return this.#store.listLive(p.teamId);
  }

  async revoke(p: Principal, name: string): Promise<void> {
    const rec = await this.#store.live(p.teamId, name);
    if (!rec) throw notFound(`secret '${name.slice(0, 64)}' not found`);
    const now = this.#clock.now();
    await this.#store.revoke(rec.id, now);
    const cached = this.#secrets.get(rec.id);
    if (cached) cached.revokedAt = now;
  }

  /**
   * Learns revocations made on other API replicas for the secrets bound here, so the egress proxy
   * stops swapping their tokens; run periodically (that period bounds how late a replica learns).
   */
  syncRevocations(): Promise<void> {
    this.#syncing ??= this.#syncRevocations().finally(() => (this.#syncing = undefined));
    return this.#syncing;
  }

  async #syncRevocations(): Promise<void> {
    const bound = new Set<string>();
    for (const tokens of this.#bySandbox.values()) for (const b of tokens.values()) if (this.#secrets.get(b.secretId)?.revokedAt === null) bound.add(b.secretId);
    if (bound.size === 0) return;
    for (const r of await this.#store.revokedAmong([...bound])) this.#secrets.get(r.id)!.revokedAt = r.revokedAt;
  }

  /** Validates bindings (nothing is written when one fails) and gives each a proxy token: env name -> token. */
  async bind(teamId: string, sandboxId: string, bindings: Record<string, string>): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    const resolved: { env: string; secret: SecretRecord }[] = [];
    for (const [envName, name] of Object.entries(bindings)) {
      if (RESERVED_ENV.has(envName) || envName.toUpperCase().startsWith('SANDPIT_')) throw badRequest(`secrets: ${envName} is reserved by the platform`);
      const secret = await this.#store.live(teamId, name);
      if (!secret) {
        if (await this.#store.anyWithName(teamId, name)) throw conflict(`secrets: secret '${name}' has been revoked; create it again to bind it`);
        throw notFound(`secrets: secret '${name}' not found`);
      }
      resolved.push({ env: envName, secret });
    }
    if (resolved.length === 0) return env;
    const now = this.#clock.now();
    const rows = resolved.map((r) => ({ sandboxId, env: r.env, secretId: r.secret.id, token: newProxyToken(), createdAt: now }));
    await this.#store.insertBindings(rows);
    const tokens = this.#tokens(sandboxId);
    for (const [i, r] of rows.entries()) {
      this.#secrets.set(r.secretId, resolved[i]!.secret);
      tokens.set(r.token, { env: r.env, secretId: r.secretId });
      env[r.env] = r.token;
    }
    return env;
  }

  /** A live secret's value for the platform's own use (registry credentials of image builds); never logged. */
  async valueOf(teamId: string, name: string): Promise<string | undefined> {
    const s = await this.#store.live(teamId, name);
    return s ? this.#decrypt(s.id, s.ciphertext) : undefined;
  }

  /** Loads the bindings of a sandbox moved here from another node. */
  async adopt(sandboxId: string): Promise<void> {
    const bindings = await this.#store.bindingsOf(sandboxId);
    for (const r of await this.#store.byIds([...new Set(bindings.map((b) => b.secretId))])) this.#secrets.set(r.id, r);
    for (const b of bindings) this.#tokens(sandboxId).set(b.token, { env: b.env, secretId: b.secretId });
  }

  /** Drops this process's copy of a sandbox's bindings (it moved to another node), leaving them stored. */
  forget(sandboxId: string): void {
    this.#bySandbox.delete(sandboxId);
  }

  async unbind(sandboxId: string): Promise<void> {
    this.#bySandbox.delete(sandboxId);
    await this.#store.deleteBindings(sandboxId);
  }

  hasBindings(sandboxId: string): boolean {
    return (this.#bySandbox.get(sandboxId)?.size ?? 0) > 0;
  }

  /** What the proxy swaps a token for; only the sandbox the token was issued to can use it. */
  token(sandboxId: string, token: string): TokenBinding | undefined {
    const b = this.#bySandbox.get(sandboxId)?.get(token);
    const s = b && this.#secrets.get(b.secretId);
    if (!b || !s) return undefined;
    return { env: b.env, secret: s.name, revoked: s.revokedAt !== null, hosts: s.allowedHosts, value: () => this.#decrypt(s.id, s.ciphertext) };
  }

  /** Names of each sandbox's bound secrets that are revoked, from the store: every replica answers the same. */
  async revokedNames(sandboxIds: string[]): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>();
    for (const r of await this.#store.revokedBound(sandboxIds)) {
      let names = out.get(r.sandboxId);
      if (!names) out.set(r.sandboxId, (names = new Set()));
      names.add(r.name);
    }
    return out;
  }

  #tokens(sandboxId: string): Map<string, Binding> {
    let m = this.#bySandbox.get(sandboxId);
    if (!m) this.#bySandbox.set(sandboxId, (m = new Map()));
    return m;
  }

  #encrypt(id: string, value: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.#key, iv);
    c.setAAD(Buffer.from(id));
    const ct = Buffer.concat([c.update(value, 'utf8'), c.final()]);
    return `v1:${Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64')}`;
  }

  #decrypt(id: string, text: string): string {
    const raw = Buffer.from(text.slice(3), 'base64');
    const d = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, 12));
    d.setAAD(Buffer.from(id));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  }
}
