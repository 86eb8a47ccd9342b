import { defineConfig } from 'tsup';

// The installed CLI: plain JavaScript for Node 20+, with the SDK bundled in. The server stays outside:
// `serve` and the operator commands run from a Sandpit checkout only.
export default defineConfig({
  entry: ['src/main.ts'],
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  clean: true,
  external: ['@sandpit/server'],
});
