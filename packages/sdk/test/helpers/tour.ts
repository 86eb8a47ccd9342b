/**
 * One walk through the README's main calls, as JavaScript source that runs unchanged in Node (ESM and
 * CommonJS), Bun and a browser page: `tour(sdk, clientOptions, label)` resolves to what it saw.
 */
export const TOUR = `async function tour(sdk, clientOptions, label) {
  const client = new sdk.SandpitClient(clientOptions);
  const info = await client.info();
  const sb = await sdk.Sandbox.create({ client, metadata: { runtime: label } });
  try {
    const run = await sb.commands.run('echo hi; echo oops >&2; exit 3');
    let streamed = '';
    const stream = await sb.commands.stream('for i in 1 2; do echo s$i; done', { onStdout: (c) => (streamed += c) });
    await sb.files.write('notes/hello.txt', 'hello from ' + label);
    const read = await sb.files.read('notes/hello.txt', { format: 'text' });
    const listed = (await sb.files.list('notes')).map((e) => e.name);
    const mine = [];
    for await (const page of sdk.Sandbox.list({ client, metadata: { runtime: label } })) mine.push(...page.map((s) => s.id));
    let missing;
    try {
      await sdk.Sandbox.get('00000000-0000-4000-8000-000000000000', { client });
    } catch (err) {
      missing = { notFound: err instanceof sdk.NotFoundError, status: err.status, code: err.code };
    }
    return { driver: info.driver, run, stream, streamed, read, listed, listedSelf: mine.length === 1 && mine[0] === sb.id, missing, killed: await sb.kill(), killedAgain: await sb.kill() };
  } finally {
    await sb.kill();
  }
}`;

/** What the tour must see, wherever it runs. */
export function expectedTour(label: string) {
  return {
    driver: 'container',
    run: { stdout: 'hi\n', stderr: 'oops\n', exitCode: 3, truncated: false },
    stream: { exitCode: 0 },
    streamed: 's1\ns2\n',
    read: `hello from ${label}`,
    listed: ['hello.txt'],
    listedSelf: true,
    missing: { notFound: true, status: 404, code: 'not_found' },
    killed: true,
    killedAgain: false,
  };
}

/** The tour as an ES module that reads SANDPIT_API_URL / SANDPIT_API_KEY like any program using the SDK. */
export const esmProgram = (label: string) => `import * as sdk from '@sandpit/sdk';
${TOUR}
console.log(JSON.stringify(await tour(sdk, {}, ${JSON.stringify(label)})));
`;

/** The same as a CommonJS script (require), for older toolchains. */
export const cjsProgram = (label: string) => `const sdk = require('@sandpit/sdk');
${TOUR}
tour(sdk, {}, ${JSON.stringify(label)}).then((r) => console.log(JSON.stringify(r)), (e) => { console.error(e); process.exit(1); });
`;

/** A TypeScript user of the package, type-checked against its .d.ts as ESM (.mts) and CommonJS (.cts). */
export const typedProgram = `import { Sandbox, SandpitClient, NotFoundError, type CommandResult, type FileEntry } from '@sandpit/sdk';
export async function typed(): Promise<[CommandResult, FileEntry[], boolean]> {
  const client = new SandpitClient({ apiUrl: 'http://localhost:3000', apiKey: 'k' });
  const sb = await Sandbox.create({ client, from_template: 'platform/base' });
  const text: string = await sb.files.read('a', { format: 'text' });
  const bytes: Uint8Array = await sb.files.read('a');
  void text;
  void bytes;
  return [await sb.commands.run('true'), await sb.files.list('.'), new NotFoundError(404, 'not_found', 'x') instanceof Error];
}
`;
