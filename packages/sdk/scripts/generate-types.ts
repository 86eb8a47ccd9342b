import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { openApiDocument } from '../../server/src/openapi-document.ts';

export const GENERATED_FILE = fileURLToPath(new URL('../src/generated/openapi.ts', import.meta.url));

const HEADER = `// Generated from the server's OpenAPI document by packages/sdk/scripts/generate-types.ts.
// Do not edit: run \`npm run generate -w @sandpit/sdk\` after changing a route or schema.

`;

/** The TypeScript types of the server's current OpenAPI document. */
export async function generateTypes(): Promise<string> {
  const doc = await openApiDocument();
  return HEADER + astToString(await openapiTS(doc as never, { alphabetize: true }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(GENERATED_FILE, await generateTypes());
  console.log(`wrote ${GENERATED_FILE}`);
}
