import { Command } from 'commander';
import { runningServerPid } from '../server-pid.ts';

const STOP_WAIT_MS = 60_000;

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** Stops the server of a data directory; with --all also every sandbox and what the host holds for them. */
export function downCommand(): Command {
  return new Command('down')
    .description('stop the platform serving $SANDPIT_DATA_DIR; --all also stops its sandboxes and unmounts and removes what it made on the host')
    .option('--all', 'also stop every sandbox and release layer stores, loop devices, namespaces and nft tables')
    .action(async (opts: { all?: boolean }) => {
      const { loadConfig, teardownEngine } = await import('@sandpit/server');
      const config = loadConfig(process.env);
      const pid = await runningServerPid(config.dataDir);
      if (pid === undefined) {
        console.log(`no server running for ${config.dataDir}`);
      } else {
        process.kill(pid, 'SIGTERM');
        if (!(await waitForExit(pid, STOP_WAIT_MS))) {
          console.error(`the server (pid ${pid}) did not stop within ${STOP_WAIT_MS / 1000} s; nothing else was done`);
          process.exit(1);
        }
        console.log(`server stopped (pid ${pid})`);
      }
      if (opts.all) {
        await teardownEngine(config);
        console.log(`sandboxes stopped; layer stores, namespaces and nft rules of ${config.dataDir} released`);
      }
    });
}
