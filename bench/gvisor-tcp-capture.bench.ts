/**
 * Issue 11 ("noticed"): gVisor captures and TCP, through a real server on the gvisor driver.
 * 1. Whether the 409's Retry-After is right: BENCH_SANDBOXES sandboxes (default 3, at most 5) each close a
 *    connection through the egress path (curl: the sandbox closes first, gVisor keeps TIME_WAIT); the pause
 *    is refused with Retry-After N; after N s it is tried again (it must work), and once more at N - 3 s in a
 *    twin sandbox (it must still be refused, else the rule waits too long).
 * 2. What the checks cost: hiddenEndpoints() on this host's conntrack table (no close under way, and with
 *    one), and pause + resume of an idle sandbox and of one with a TCP listener (which adds the epoll search).
 * Prints; asserts nothing. About 75 s.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { hiddenEndpoints } from '../packages/server/src/runtime/gvisor/tcp-drain.ts';
import { Internet } from '../packages/server/test/helpers/internet.ts';
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { report, sample } from './stats.ts';

const N = Math.min(5, Number(process.env.BENCH_SANDBOXES ?? 3));
const ADDR = "ip -4 -o addr show | awk '{print $4}' | cut -d/ -f1 | grep -v '^127\\.'";

const dir = await mkdtemp(join(tmpdir(), 'sandpit-bench-tcp-'));
const inet = await Internet.start(dir);
const srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_DNS_UPSTREAM: `${inet.dns}:53`, SANDPIT_EGRESS_UPSTREAM_CA: inet.caFile });
const api = new Api(srv.url, srv.key);
try {
  const exec = async (id: string, command: string) => (await api.post(`/sandboxes/${id}/exec`, { command })).body as { stdout: string };
  const create = async () => (await api.post('/sandboxes', {})).body.id as string;

  // 1. Retry-After: on time (works), early by 3 s (still refused).
  const ids = await Promise.all(Array.from({ length: 2 * N }, create));
  const addrs = await Promise.all(ids.map(async (id) => (await exec(id, ADDR)).stdout.trim()));
  const results = await Promise.all(
    ids.map(async (id, i) => {
      const early = i >= N;
      await exec(id, 'curl -s -o /dev/null http://www.example.test/');
      const first = await api.post(`/sandboxes/${id}/pause`);
      const after = Number(first.headers.get('retry-after'));
      if (first.status !== 409 || !(after > 0)) {
        console.log(`unexpected first answer ${first.status}: ${JSON.stringify(first.body)}`);
        return { early, first: first.status, after, second: 0 };
      }
      await sleep((early ? after - 3 : after) * 1000);
      return { early, first: first.status, after, second: (await api.post(`/sandboxes/${id}/pause`)).status };
    }),
  );
  for (const early of [false, true]) {
    const rs = results.filter((r) => r.early === early);
    const label = early ? 'retried 3 s before Retry-After' : 'retried at Retry-After';
    console.log(`${label.padEnd(32)} first ${rs.map((r) => r.first).join(',')}   retry-after ${rs.map((r) => r.after).join(',')} s   then ${rs.map((r) => r.second).join(',')}`);
  }

  // 2. The host-side check's cost, here and now.
  const busy = new Set([addrs[N]!]);
  const idle = new Set(['100.127.255.254']);
  report('hiddenEndpoints, no close under way', await sample(30, () => hiddenEndpoints(idle, 0, new Set())));
  await exec(ids[N]!, 'curl -s -o /dev/null http://www.example.test/');
  report('hiddenEndpoints, one TIME_WAIT', await sample(30, () => hiddenEndpoints(busy, 0, new Set())));
  const cycle = (id: string) => async () => {
    await api.post(`/sandboxes/${id}/pause`);
    await api.post(`/sandboxes/${id}/resume`);
  };
  // The same Python process with and without a TCP listener: a listener makes the capture look for epoll holders.
  const python = (listen: boolean) =>
    `setsid python3 -c "import socket, time\nif ${listen ? 'True' : 'False'}: s = socket.socket(); s.bind(('0.0.0.0', 8000)); s.listen()\ntime.sleep(1e9)" >/dev/null 2>&1 < /dev/null & sleep 1`;
  for (const listen of [false, true]) {
    const id = await create();
    await exec(id, python(listen));
    report(`pause + resume, Python ${listen ? 'with' : 'without'} a listener`, await sample(5, cycle(id)));
  }
  const inside = await create();
  report('the epoll search alone, run by exec', await sample(5, () => exec(inside, "find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/fd/*' -type l -printf '%h %l\\n' >/dev/null")));
  report('an empty exec, for comparison', await sample(5, () => exec(inside, 'true')));
} finally {
  await srv.stop();
  inet.stop();
  await rm(dir, { recursive: true, force: true });
}
