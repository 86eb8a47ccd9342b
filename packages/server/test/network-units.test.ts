import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { describe, test } from 'node:test';
import { AddressPool } from '../src/network/addr.ts';
import { answerAddresses, emptyReply, parseQuestion } from '../src/network/dns.ts';
import { attachText, baseTableText, detachText, sandboxRules } from '../src/network/nft.ts';
import { compilePolicy, dnsAllowed, domainMatches, ipVerdict } from '../src/network/rules.ts';
import { helloBytesNeeded, looksLikeHttp, parseSni } from '../src/network/tls-hello.ts';
import { newProxyToken, swapHeaders, type TokenBinding } from '../src/network/token-swap.ts';

describe('address pool', () => {
  test('carves /30s: host .1, sandbox .2', () => {
    const pool = new AddressPool('100.96.0.0/12');
    assert.equal(pool.slots, 2 ** 18);
    assert.equal(pool.hostIp(0), '100.96.0.1');
    assert.equal(pool.sandboxIp(0), '100.96.0.2');
    assert.equal(pool.sandboxIp(70), '100.96.1.26');
    assert.equal(pool.slotOfSandboxIp('100.96.1.26'), 70);
    assert.equal(pool.slotOfSandboxIp('100.96.1.25'), undefined);
    assert.equal(pool.slotOfSandboxIp('198.19.0.2'), undefined);
    assert.throws(() => pool.hostIp(2 ** 18));
  });

  test('refuses pools over forbidden or host ranges', () => {
    for (const bad of ['10.0.0.0/16', '10.255.255.0/28', '203.0.113.0/26', '192.168.1.0/24', '172.20.0.0/16', '127.0.0.0/24', '169.254.0.0/16', '0.0.0.0/0', 'nonsense', '100.64.0.0/31']) {
      assert.throws(() => new AddressPool(bad), Error, bad);
    }
    assert.doesNotThrow(() => new AddressPool('198.18.0.0/24'));
  });
});

describe('egress rules', () => {
  const p = compilePolicy({ allow_out: ['api.example.com', '*.cdn.example', '203.0.113.7/32', '1.2.3.0/24', '10.1.0.0/16'], deny_out: ['1.2.3.4/32'] });

  test('addresses: always-blocked, deny over allow, allow list', () => {
    assert.equal(ipVerdict(p, '10.1.2.3'), 'deny', 'always blocked even when allowed');
    for (const ip of ['127.0.0.1', '169.254.169.254', '172.16.5.5', '192.168.0.1', '224.0.0.1', '0.1.2.3']) assert.equal(ipVerdict(p, ip), 'deny', ip);
    assert.equal(ipVerdict(p, '1.2.3.4'), 'deny');
    assert.equal(ipVerdict(p, '1.2.3.5'), 'allow');
    assert.equal(ipVerdict(p, '8.8.8.8'), 'name', 'only a domain rule could allow it');
    assert.equal(ipVerdict(compilePolicy({ allow_out: ['1.2.3.0/24'] }), '8.8.8.8'), 'deny');
    assert.equal(ipVerdict(compilePolicy(null), '8.8.8.8'), 'allow');
    assert.equal(ipVerdict(compilePolicy(null), '100.96.0.6', [new AddressPool('100.96.0.0/12').cidr]), 'deny');
  });

  test('domains: exact and wildcard (not the apex)', () => {
    assert.ok(domainMatches('api.example.com', 'API.example.com.'));
    assert.ok(!domainMatches('api.example.com', 'x.api.example.com'));
    assert.ok(domainMatches('*.cdn.example', 'a.cdn.example'));
    assert.ok(domainMatches('*.cdn.example', 'a.b.cdn.example'));
    assert.ok(!domainMatches('*.cdn.example', 'cdn.example'));
    assert.ok(!domainMatches('*.cdn.example', 'evilcdn.example'));
  });

  test('DNS under an allow list: named domains, or all when the resolver is allowed', () => {
    assert.ok(dnsAllowed(p, '100.96.0.1', 'api.example.com'));
    assert.ok(!dnsAllowed(p, '100.96.0.1', 'other.com'));
    assert.ok(dnsAllowed(compilePolicy({ allow_out: ['100.96.0.0/30'] }), '100.96.0.1', 'other.com'));
    assert.ok(dnsAllowed(compilePolicy(null), '100.96.0.1', 'anything.com'));
  });
});

describe('nft compilation', () => {
  test('a sandbox chain: DNS, blocked, host, deny, allow, default', () => {
    const rules = sandboxRules(compilePolicy({ allow_out: ['1.2.3.0/24', 'a.com'], deny_out: ['1.2.3.4'] }));
    assert.deepEqual(rules, [
      'udp dport 53 accept',
      'ip daddr @blocked drop',
      'fib daddr type local drop',
      'ip daddr { 1.2.3.4/32 } drop',
      'ip daddr { 1.2.3.0/24 } accept',
      'meta l4proto tcp accept',
      'drop',
    ]);
    assert.equal(sandboxRules(compilePolicy(null)).at(-1), 'accept');
    assert.equal(sandboxRules(compilePolicy({ allow_out: ['1.2.3.0/24'] })).includes('meta l4proto tcp accept'), false);
  });

  test('attach replaces the chain and maps the interface in one transaction; detach undoes it', () => {
    const text = attachText('sandpit_x', 7, compilePolicy(null));
    assert.match(text, /^add chain inet sandpit_x sb7\nflush chain inet sandpit_x sb7\n/);
    assert.match(text, /add element inet sandpit_x sandboxes \{ "sp7h" : jump sb7 \}/);
    assert.equal(detachText('sandpit_x', 7), 'delete element inet sandpit_x sandboxes { "sp7h" }\ndelete chain inet sandpit_x sb7\n');
    const base = baseTableText({ table: 'sandpit_x', dnsPort: 5353, proxyPort: 15000, blocked: ['10.0.0.0/8'] }, [1], [{ slot: 7, policy: compilePolicy(null) }]);
    assert.match(base, /set ifs \{ type ifname; elements = \{ "sp1h", "sp7h" \} \}/);
    assert.match(base, /redirect to :15000/);
    assert.match(base, /"sp7h" : jump sb7/);
  });
});

describe('token swap', () => {
  const value = 'REAL-VALUE';
  const live = newProxyToken();
  const revoked = newProxyToken();
  const scoped = newProxyToken();
  const bindings = new Map<string, TokenBinding>([
    [live, { env: 'A', secret: 'a', revoked: false, hosts: [], value: () => value }],
    [revoked, { env: 'B', secret: 'b', revoked: true, hosts: [], value: () => 'never' }],
    [scoped, { env: 'C', secret: 'c', revoked: false, hosts: ['*.example.com'], value: () => 'scoped' }],
  ]);
  const lookup = (t: string) => bindings.get(t);

  test('replaces tokens in headers and inside Basic credentials', () => {
    const basic = Buffer.from(`user:${live}`).toString('base64');
    const out = swapHeaders(['Authorization', `Bearer ${live}`, 'X-Other', 'keep', 'Proxy-Authorization', `Basic ${basic}`], 'h.com', lookup);
    assert.deepEqual(out, ['Authorization', 'Bearer REAL-VALUE', 'X-Other', 'keep', 'Proxy-Authorization', `Basic ${Buffer.from('user:REAL-VALUE').toString('base64')}`]);
  });

  test('refuses revoked tokens and hosts outside the secret scope; leaves unknown tokens', () => {
    assert.deepEqual((swapHeaders(['X', revoked], 'h.com', lookup) as { code: string }).code, 'secret_revoked');
    assert.deepEqual((swapHeaders(['X', scoped], 'h.com', lookup) as { code: string }).code, 'secret_host_not_allowed');
    assert.deepEqual(swapHeaders(['X', scoped], 'api.example.com', lookup), ['X', 'scoped']);
    const unknown = newProxyToken();
    assert.deepEqual(swapHeaders(['X', unknown], 'h.com', lookup), ['X', unknown]);
  });
});

describe('protocol sniffing', () => {
  test('reads the SNI of a real ClientHello', async () => {
    const hello = await new Promise<Buffer>((resolve) => {
      const srv = createServer((s) => {
        s.once('data', (d) => {
          resolve(d);
          s.destroy();
          srv.close();
        });
      }).listen(0, '127.0.0.1', () => {
        const c = tlsConnect({ host: '127.0.0.1', port: (srv.address() as { port: number }).port, servername: 'API.Example.com' });
        c.on('error', () => undefined);
      });
    });
    assert.equal(helloBytesNeeded(hello), 0);
    assert.equal(parseSni(hello), 'api.example.com');
    assert.ok(helloBytesNeeded(hello.subarray(0, 20)) > 0);
    assert.ok(looksLikeHttp(Buffer.from('GET / HTTP/1.1\r\n')));
    assert.ok(!looksLikeHttp(hello));
  });

  test('DNS question, answers and refusals', () => {
    const q = Buffer.from('1234010000010000000000000361706907657861' + '6d706c6503636f6d0000010001', 'hex');
    const parsed = parseQuestion(q)!;
    assert.equal(parsed.name, 'api.example.com');
    assert.equal(parsed.type, 1);
    const refused = emptyReply(q, parsed, 5);
    assert.equal(refused.readUInt16BE(2) & 0x800f, 0x8005);
    const answer = Buffer.concat([q, Buffer.from('c00c000100010000003c000401020304', 'hex')]);
    answer.writeUInt16BE(1, 6);
    assert.deepEqual(answerAddresses(answer), ['1.2.3.4']);
  });
});
