import module from 'node:module';
type ServerModule = typeof import('@sandpit/server');

/**
 * The server, for `serve` and the operator commands. It runs from a Sandpit checkout only (root, the
 * agent binary, native modules), so the installed client CLI says so instead of failing with a stack.
 */
export async function loadServer(): Promise<ServerModule> {
  // V8's code for the server's modules, kept on disk (os.tmpdir(), or NODE_COMPILE_CACHE): loading them
  // took 1.7 s of CPU at each start, about half of it compiling what did not change. Absent before Node 22.8.
  module.enableCompileCache?.();
  try {
    return await import('@sandpit/server');
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND' || !String((err as Error).message).includes("'@sandpit/server'")) throw err;
    console.error('error: this command runs the server and needs a Sandpit checkout: run it there as ./sandpit (serve is ./sandpit up)');
    process.exit(1);
  }
}
