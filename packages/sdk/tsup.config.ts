import { defineConfig } from 'tsup';

// One bundle per module format, for Node 20+, Bun, Deno and browsers alike: the SDK uses web APIs only.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  platform: 'neutral',
  target: 'es2022',
  dts: true,
  sourcemap: true,
  clean: true,
});
