import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import pino from 'pino';
import { NodeAgent } from '../src/cluster/node-agent.ts';
import { loadConfig } from '../src/config.ts';

/** An API replica that counts the heartbeats it accepts. */
async function replica(): Promise<{ server: Server; url: string; beats: () => number }> {
  let beats = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      beats++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"reconcile":false}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, beats: () => beats };
}

test('a node whose first API replica is gone heartbeats to the next one, every beat', async () => {
  const gone = await replica();
  const live = await replica();
  await new Promise<void>((r) => gone.server.close(() => r()));
  // The closed replica first, so each beat starts by failing there.
  const config = loadConfig({
    SANDPIT_ROLE: 'node',
    SANDPIT_NODE_ID: 'n1',
    SANDPIT_CLUSTER_KEY: 'ab'.repeat(32),
    SANDPIT_API_URL: `${gone.url},${live.url}`,
    SANDPIT_DATA_DIR: tmpdir(),
  });
  const agent = new NodeAgent({
    config,
    url: 'http://127.0.0.1:1',
    engine: 'container',
    templates: { builtVersions: async () => [] } as never,
    allocated: async () => ({ sandboxes: 0, vcpus: 0, memoryMib: 0 }),
    copies: { held: () => [] },
    tokens: { for: () => 'token' } as never,
    channel: { fetch: (url: URL, init: RequestInit) => fetch(url, init) } as never,
    log: pino({ level: 'silent' }),
    reconcile: async () => undefined,
  });
  try {
    for (let i = 0; i < 3; i++) await agent.beat();
    assert.equal(live.beats(), 3);
    assert.equal(agent.registered, true);
  } finally {
    await new Promise<void>((r) => live.server.close(() => r()));
  }
});
