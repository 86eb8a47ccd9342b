import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';

const SRC = new URL('../src/', import.meta.url).pathname;

// The SDK runs in browsers and bundlers too: its runtime code may use only web-standard APIs.
it('the SDK source imports no Node built-ins', async () => {
  const files = (await readdir(SRC, { recursive: true })).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 5);
  for (const file of files) {
    const text = await readFile(join(SRC, file), 'utf8');
    assert.doesNotMatch(text, /from ['"]node:|require\(|\bBuffer\b/, `${file} uses a Node-only API`);
  }
});
