import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header every delivery carries: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the webhook's secret>`. */
export const SIGNATURE_HEADER = 'x-sandpit-signature';

export function sign(secret: string, timestampS: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex');
  return `t=${timestampS},v1=${mac}`;
}

/** The receiver's check (docs/observability.md has the recipe): the signature matches and is at most `toleranceS` old. */
export function verify(secret: string, header: string, body: string, nowS: number, toleranceS = 300): boolean {
  const parts = new Map(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(nowS - t) > toleranceS) return false;
  const want = Buffer.from(sign(secret, t, body).split('v1=')[1]!, 'hex');
  const got = Buffer.from(v1, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}
