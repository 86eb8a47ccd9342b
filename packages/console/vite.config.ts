import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import preact from '@preact/preset-vite';
import { defineConfig, type Plugin } from 'vite';

/** Writes .br and .gz next to each written asset so the server sends them precompressed. */
function precompress(): Plugin {
  return {
    name: 'sandpit-precompress',
    apply: 'build',
    // After writing: earlier hooks still see chunks that other plugins rewrite before output.
    writeBundle(opts) {
      const dir = opts.dir!;
      for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
        if (!/\.(js|css|html|svg)$/.test(name)) continue;
        const buf = readFileSync(join(dir, name));
        writeFileSync(join(dir, `${name}.br`), brotliCompressSync(buf, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } }));
        writeFileSync(join(dir, `${name}.gz`), gzipSync(buf, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  base: '/console/',
  plugins: [preact(), precompress()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', reportCompressedSize: false, chunkSizeWarningLimit: 1000 },
});
