import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ociConfig } from '../src/runtime/host/oci-config.ts';

const input = () => ({
  spec: { id: 'caps-test', templateRoot: '/nonexistent', resources: { vcpuCount: 1, memoryMib: 512, diskMib: 1024 }, env: {}, hostname: 'caps-test' },
  rootfs: '/nonexistent/rootfs',
  runDir: '/nonexistent/run',
  agentBinary: '/nonexistent/agent',
  nofile: 1024,
});
type Caps = Record<'bounding' | 'effective' | 'permitted', string[]>;
const capsOf = (config: object) => (config as { process: { capabilities: Caps } }).process.capabilities;

test("each config's capability sets are its own: one added to a set (gVisor's agent) reaches neither its other sets nor a later config", () => {
  const first = capsOf(ociConfig(input()));
  first.bounding.push('CAP_SYS_ADMIN');
  assert.ok(!first.effective.includes('CAP_SYS_ADMIN'));
  assert.ok(!first.permitted.includes('CAP_SYS_ADMIN'));
  const later = capsOf(ociConfig(input()));
  for (const set of ['bounding', 'effective', 'permitted'] as const) assert.ok(!later[set].includes('CAP_SYS_ADMIN'), `${set}: ${later[set].join(',')}`);
});
