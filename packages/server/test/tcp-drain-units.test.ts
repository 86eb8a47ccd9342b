import assert from 'node:assert/strict';
import { test } from 'node:test';
import { epollTcpHolders, tcpInodes } from '../src/runtime/gvisor/epoll-sockets.ts';
import { nicListeners, openTcpEndpoints } from '../src/runtime/gvisor/netns.ts';
import { hiddenAmong } from '../src/runtime/gvisor/tcp-drain.ts';
import { parseTrackedTcpFlows } from '../src/runtime/host/conntrack.ts';
import { parseTcpStates } from '../src/runtime/host/host-tcp.ts';

// Lines in this host's format for a gVisor sandbox at 100.96.0.6 (host side 100.96.0.5); the first three as printed during a test run.
const CONNTRACK = [
  // The sandbox's curl through the egress redirect, closed by curl 21 s ago.
  'ipv4     2 tcp      6 99 TIME_WAIT src=100.96.0.6 dst=198.19.184.3 sport=57917 dport=80 src=100.96.0.5 dst=100.96.0.6 sport=44867 dport=57917 [ASSURED] mark=0 zone=0 use=2',
  // A preview request the gateway (the host) closed first.
  'ipv4     2 tcp      6 119 TIME_WAIT src=100.96.0.5 dst=100.96.0.6 sport=58402 dport=3000 src=100.96.0.6 dst=100.96.0.5 sport=3000 dport=58402 [ASSURED] mark=0 zone=0 use=2',
  // A preview WebSocket still open.
  'ipv4     2 tcp      6 431999 ESTABLISHED src=100.96.0.5 dst=100.96.0.6 sport=58422 dport=3000 src=100.96.0.6 dst=100.96.0.5 sport=3000 dport=58422 [ASSURED] mark=0 zone=0 use=2',
  // Closed 70 s ago: the sandbox's TIME_WAIT (60 s) is over.
  'ipv4     2 tcp      6 50 TIME_WAIT src=100.96.0.6 dst=198.19.184.3 sport=41000 dport=80 src=100.96.0.5 dst=100.96.0.6 sport=44867 dport=41000 [ASSURED] mark=0 zone=0 use=2',
  // The sandbox closed, the proxy has not yet.
  'ipv4     2 tcp      6 60 CLOSE_WAIT src=100.96.0.6 dst=198.19.184.3 sport=42000 dport=80 src=100.96.0.5 dst=100.96.0.6 sport=44868 dport=42000 [ASSURED] mark=0 zone=0 use=2',
  'ipv4     2 udp      17 8 src=100.96.0.6 dst=100.96.0.5 sport=20575 dport=53 src=100.96.0.5 dst=100.96.0.6 sport=57925 dport=20575 mark=0 zone=0 use=2',
  'ipv4     2 tcp      6 119 TIME_WAIT src=100.96.0.1 dst=100.96.0.2 sport=49166 dport=3000 src=100.96.0.2 dst=100.96.0.1 sport=3000 dport=49166 [ASSURED] mark=0 zone=0 use=2',
].join('\n');

// The host's /proc/net/tcp: the gateway's TIME_WAIT (100.96.0.5:58402 -> 100.96.0.6:3000) and the proxy's CLOSE_WAIT (:44868 -> :42000).
const HOST_TCP = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 05006064:E422 06006064:0BB8 06 00000000:00000000 03:00000F5B 00000000     0        0 0 3 0000000000000000',
  '   1: 05006064:AF44 06006064:A410 08 00000000:00000000 00:00000000 00000000     0        0 912 1 0000000000000000 20 4 0 10 -1',
  '   2: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 913 1 0000000000000000 20 4 0 10 -1',
].join('\n');

const ADDRS = new Set(['100.96.0.6']);
const TIMEOUTS = { established: 432000, fin_wait: 120, close_wait: 60, last_ack: 30, time_wait: 120, close: 10, syn_sent: 120, syn_recv: 60 };
// The sandbox lists the WebSocket; the CLOSE_WAIT flow's end is gone from its table (it closed it).
const INSIDE = new Set(['100.96.0.6:3000 -> 100.96.0.5:58422']);
const rule = { addrs: ADDRS, sinceMs: 0, inside: INSIDE, now: 1_000_000_000, timeouts: TIMEOUTS };

test('conntrack and host socket lines parse into flows and states', () => {
  const flows = parseTrackedTcpFlows(CONNTRACK, ADDRS);
  assert.equal(flows.length, 5, 'TCP flows of the sandbox only (no UDP, no other sandbox)');
  assert.deepEqual(flows[0], {
    state: 'TIME_WAIT',
    timeoutS: 99,
    orig: { src: '100.96.0.6', dst: '198.19.184.3', sport: 57917, dport: 80 },
    reply: { src: '100.96.0.5', dst: '100.96.0.6', sport: 44867, dport: 57917 },
  });
  assert.deepEqual(
    [...parseTcpStates(HOST_TCP, ADDRS)],
    [
      ['100.96.0.5:58402>100.96.0.6:3000', 'TIME_WAIT'],
      ['100.96.0.5:44868>100.96.0.6:42000', 'CLOSE_WAIT'],
    ],
  );
});

test('the rule: the sandbox closed first -> hidden until 60 s after; the host closed first, listed inside or over -> not', () => {
  const flows = parseTrackedTcpFlows(CONNTRACK, ADDRS);
  const host = parseTcpStates(HOST_TCP, ADDRS);
  assert.deepEqual(hiddenAmong(flows, host, rule), [
    // conntrack entered TIME_WAIT 20-21 s ago: the sandbox's ends in 39-40 s.
    { flow: '100.96.0.6:57917 -> 198.19.184.3:80', clearsInMs: 40_000 },
    // The sandbox closed it (no longer listed), the proxy has not yet: FIN_WAIT2, then TIME_WAIT.
    { flow: '100.96.0.6:42000 -> 198.19.184.3:80' },
  ]);
  // Closed by the sandbox a moment ago, its FIN not yet out: conntrack still says ESTABLISHED.
  assert.deepEqual(hiddenAmong(flows, host, { ...rule, inside: new Set() }), [
    { flow: '100.96.0.6:57917 -> 198.19.184.3:80', clearsInMs: 40_000 },
    { flow: '100.96.0.5:58422 -> 100.96.0.6:3000' },
    { flow: '100.96.0.6:42000 -> 198.19.184.3:80' },
  ]);
  // A netstack started 15 s ago: the TIME_WAIT of 20 s ago belonged to an earlier sandbox on the address.
  assert.deepEqual(hiddenAmong(flows, host, { ...rule, sinceMs: rule.now - 15_000 }), [{ flow: '100.96.0.6:42000 -> 198.19.184.3:80' }]);
});

test('inside the sandbox: open endpoints skip listeners and loopback; settling ones are told apart; socket inodes', () => {
  const inside = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   3: 06006064:0BB8 05006064:E422 08 00000000:00000000 00:00000000 00000000  1000        0        4 1 0000000000000000 0 0 0 0 -1',
    '   4: 06006064:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0        5 1 0000000000000000 0 0 0 0 -1',
    '   5: 06006064:0BB8 05006064:E436 01 00000000:00000000 00:00000000 00000000  1000        0        6 1 0000000000000000 0 0 0 0 -1',
    '   6: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0        7 1 0000000000000000 0 0 0 0 -1',
  ].join('\n');
  assert.deepEqual(openTcpEndpoints(inside), [
    { flow: '100.96.0.6:3000 -> 100.96.0.5:58402', settling: true },
    { flow: '100.96.0.6:3000 -> 100.96.0.5:58422', settling: false },
  ]);
  assert.deepEqual([...tcpInodes(inside)], ['4', '5', '6', '7']);
  // Listeners a caller outside can dial: not loopback's, each port once (v4 and v6 both listed).
  const listeners = [
    inside,
    '   7: 00000000:C34F 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0        8 1 0000000000000000 0 0 0 0 -1',
    '   8: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0        9 1 0000000000000000 0 0 0 0 -1',
    '   0: 00000000000000000000000000000000:C34F 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0       10 1 0000000000000000 0 0 0 0 -1',
  ].join('\n');
  assert.deepEqual(nicListeners(listeners), [3000, 49999]);
});

test('epoll holders: a process with an epoll instance and one of the TCP sockets', async () => {
  const fds = ['/proc/4/fd anon_inode:[eventpoll]', '/proc/4/fd socket:[5]', '/proc/9/fd socket:[6]', '/proc/12/fd anon_inode:[eventpoll]', '/proc/12/fd socket:[77]', ''].join('\n');
  const name = async (pid: string) => pid;
  assert.deepEqual(await epollTcpHolders({ descriptors: async () => fds, name }, new Set(['5', '6'])), ['4']);
  assert.deepEqual(await epollTcpHolders({ descriptors: async () => assert.fail('no sockets, no search'), name }, new Set()), []);
});
