import { randomBytes } from 'node:crypto';
import { domainMatches } from './rules.ts';

/** What the sandbox holds in place of a secret: useless anywhere but through its own proxy. */
export const newProxyToken = () => `sandpit-proxy-token-${randomBytes(24).toString('base64url')}`;
const TOKEN = /sandpit-proxy-token-[A-Za-z0-9_-]{32}/g;

export interface TokenBinding {
  env: string;
  secret: string;
  revoked: boolean;
  /** Hosts the real value may be sent to (`*.domain` allowed); empty: any host. */
  hosts: string[];
  value(): string;
}

export interface SwapRefusal {
  code: 'secret_revoked' | 'secret_host_not_allowed';
  message: string;
}

function swapText(text: string, host: string, lookup: (token: string) => TokenBinding | undefined): string | SwapRefusal {
  let refusal: SwapRefusal | undefined;
  const out = text.replace(TOKEN, (token) => {
    const b = lookup(token);
    if (!b || refusal) return token;
    if (b.revoked) {
      refusal = { code: 'secret_revoked', message: `secret '${b.secret}' (bound to ${b.env}) has been revoked; the proxy no longer serves it` };
      return token;
    }
    if (b.hosts.length > 0 && !b.hosts.some((h) => domainMatches(h, host))) {
      refusal = { code: 'secret_host_not_allowed', message: `secret '${b.secret}' (bound to ${b.env}) may not be sent to ${host}` };
      return token;
    }
    return b.value();
  });
  return refusal ?? out;
}

/**
 * Replaces the proxy tokens in request headers (raw name/value pairs) with the real values,
 * also inside `Basic` credentials. Unknown token-shaped strings pass unchanged.
 */
export function swapHeaders(raw: string[], host: string, lookup: (token: string) => TokenBinding | undefined): string[] | SwapRefusal {
  const out = raw.slice();
  for (let i = 1; i < out.length; i += 2) {
    let value = out[i]!;
    const basic = /^(basic\s+)(\S+)$/i.exec(value);
    if (basic && out[i - 1]!.toLowerCase().endsWith('authorization')) {
      const decoded = Buffer.from(basic[2]!, 'base64').toString('utf8');
      if (decoded.includes('sandpit-proxy-token-')) {
        const swapped = swapText(decoded, host, lookup);
        if (typeof swapped !== 'string') return swapped;
        value = basic[1] + Buffer.from(swapped, 'utf8').toString('base64');
      }
    }
    if (value.includes('sandpit-proxy-token-')) {
      const swapped = swapText(value, host, lookup);
      if (typeof swapped !== 'string') return swapped;
      value = swapped;
    }
    out[i] = value;
  }
  return out;
}
