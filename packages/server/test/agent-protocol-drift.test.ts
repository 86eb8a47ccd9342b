import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AgentClient } from '../src/runtime/agent-client.ts';
import * as proto from '../src/runtime/agent-protocol.ts';
import { REPO } from './helpers/source-files.ts';

// The agent's constants (packages/agent/proto.h) and the server's (runtime/agent-protocol.ts) are
// written twice, in C and TypeScript: this test fails as soon as one side changes without the other.

/** proto.h's #defines and enum members, by name. */
async function cConstants(): Promise<Map<string, number>> {
  const text = await readFile(join(REPO, 'packages/agent/proto.h'), 'utf8');
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^#define ([A-Z][A-Z0-9_]*) \(?(0x[0-9a-f]+|\d+)u?(?: << (\d+)\))?/gm)) {
    out.set(m[1]!, Number(m[2]) * 2 ** Number(m[3] ?? 0));
  }
  for (const m of text.matchAll(/enum \{([^}]*)\}/g)) {
    let next = 0;
    for (const member of m[1]!.split(',').map((s) => s.trim())) {
      const [name, value] = member.split('=').map((s) => s.trim());
      next = value === undefined ? next : Number(value);
      out.set(name!, next++);
    }
  }
  return out;
}

const camel = (snake: string) => snake.toLowerCase().replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** C prefix -> the TypeScript table holding the same values (longest prefixes first). */
const TABLES: [string, Record<string, number>][] = [
  ['SPAWN_FLAG_', proto.SpawnFlag],
  ['SPAWNED_', proto.SpawnedTag],
  ['SPAWN_', proto.SpawnTag],
  ['FILE_FLAG_', proto.FileFlag],
  ['FILE_', proto.FileTag],
  ['OP_', proto.FileOp],
  ['REC_', proto.RecordTag],
  ['ENTRY_', proto.EntryTag],
  ['EVENT_', proto.EventTag],
  ['MOUNT_FLAG_', proto.MountFlag],
  ['MOUNT_', proto.MountTag],
  ['ATTACH_', proto.AttachTag],
  ['PROCS_', proto.ProcsTag],
  ['PROC_FLAG_', proto.ProcFlag],
  ['PROC_', proto.ProcTag],
  ['SETENV_FLAG_', proto.SetEnvFlag],
  ['SETENV_', proto.SetEnvTag],
  ['HELLO_', proto.HelloTag],
  ['EXIT_', proto.ExitTag],
  ['ERROR_', proto.ErrorTag],
  ['T_', proto.Msg],
];
const SINGLES: Record<string, number> = { PROTO_VERSION: proto.PROTOCOL_VERSION, HDR: proto.HEADER_BYTES, MAX_FRAME: proto.MAX_PAYLOAD };
/** C constants the server never sends or reads. */
const AGENT_ONLY = new Set(['SANDPIT_PROTO_H', 'READ_MAX']);

test('proto.h and agent-protocol.ts agree on every constant, both ways', async () => {
  const c = await cConstants();
  const seen = new Set<Record<string, number>>();
  const wrong: string[] = [];
  for (const [name, value] of c) {
    if (AGENT_ONLY.has(name)) continue;
    if (name in SINGLES) {
      if (SINGLES[name] !== value) wrong.push(`${name} = ${value} in C, ${SINGLES[name]} in TS`);
      continue;
    }
    if (name.startsWith('FT_')) {
      if (proto.EntryType[value] !== name.slice(3).toLowerCase()) wrong.push(`${name} = ${value}: EntryType[${value}] is ${proto.EntryType[value]}`);
      continue;
    }
    if (name.startsWith('EV_')) {
      if (proto.EventKind[value] !== name.slice(3).toLowerCase()) wrong.push(`${name} = ${value}: EventKind[${value}] is ${proto.EventKind[value]}`);
      continue;
    }
    if (name === 'READ_PATH') {
      if (proto.ReadTag.path !== value) wrong.push(`READ_PATH = ${value}, ReadTag.path ${proto.ReadTag.path}`);
      continue;
    }
    const entry = TABLES.find(([prefix]) => name.startsWith(prefix));
    if (!entry) {
      wrong.push(`${name} has no TypeScript table`);
      continue;
    }
    const [prefix, table] = entry;
    seen.add(table);
    const key = camel(name.slice(prefix.length));
    if (table[key] !== value) wrong.push(`${name} = ${value} in C, ${prefix}* table has ${key} = ${table[key]}`);
  }
  for (const [prefix, table] of TABLES) {
    for (const [key, value] of Object.entries(table)) {
      const cName = prefix + key.replace(/[A-Z]/g, (ch) => `_${ch}`).toUpperCase();
      if (c.get(cName) !== value) wrong.push(`${cName} (TS ${key} = ${value}) is ${c.get(cName)} in C`);
    }
  }
  assert.deepEqual(wrong, []);
  assert.equal(seen.size, TABLES.length, 'every table was matched by some C constant');
});

test('an agent announcing another protocol version is refused on connect (EPROTO), the current one accepted', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-proto-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const hello = (version: number) => {
    const tlv = Buffer.alloc(10);
    tlv.writeUInt16LE(proto.HelloTag.version, 0);
    tlv.writeUInt32LE(4, 2);
    tlv.writeUInt32LE(version, 6);
    const head = Buffer.alloc(proto.HEADER_BYTES);
    head.writeUInt32LE(proto.HEADER_BYTES - 4 + tlv.length, 0);
    head.writeUInt8(proto.Msg.hello, 4);
    return Buffer.concat([head, tlv]);
  };
  for (const [version, accepted] of [
    [proto.PROTOCOL_VERSION + 1, false],
    [proto.PROTOCOL_VERSION, true],
  ] as const) {
    const path = join(dir, `agent-${version}.sock`);
    const server = createServer((s) => s.write(hello(version)));
    await new Promise<void>((r) => server.listen(path, r));
    const connecting = AgentClient.connect(path, { timeoutMs: 2000 });
    if (accepted) (await connecting).close();
    else await assert.rejects(connecting, { code: 'EPROTO', message: /protocol 2, this server 1; recreate the sandbox/ });
    await new Promise((r) => server.close(r));
  }
});
