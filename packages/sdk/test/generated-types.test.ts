import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { it } from 'node:test';
import { GENERATED_FILE, generateTypes } from '../scripts/generate-types.ts';

it("the committed API types match the server's OpenAPI document", async () => {
  const committed = await readFile(GENERATED_FILE, 'utf8');
  assert.ok(committed === (await generateTypes()), 'src/generated/openapi.ts is stale: run `npm run generate -w @sandpit/sdk` and commit the result');
});
