import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuildProgress } from '@sandpit/server';
import { Command } from 'commander';
import { loadServer } from '../server-module.ts';
import { ProgressReporter } from '../progress.ts';
import { removeServerPid, writeServerPid } from '../server-pid.ts';

/** Starts the whole platform on its embedded defaults and says how to reach it. */
export function serveCommand(): Command {
  return new Command('serve')
    .description('start the platform (SQLite store, the best local runtime, the base template built on first use)')
    .option('-p, --port <port>', 'control-plane port (default: $PORT or 3000)')
    .option('--role <role>', 'all (one host), api (an API replica) or node (runs sandboxes) (default: $SANDPIT_ROLE or all)')
    .action(async (opts: { port?: string; role?: string }) => {
      // Loaded on use so that client commands start without the server's dependencies.
      const { FIRST_KEY_FILE, dieWithReaper, loadConfig, startPlatform } = await loadServer();
      dieWithReaper();
      const env = { ...process.env };
      if (opts.port) env.PORT = opts.port;
      if (opts.role) env.SANDPIT_ROLE = opts.role;
      // Quiet logs on the terminal unless asked; the progress bar and summary are what a person reads.
      env.SANDPIT_LOG_LEVEL ??= 'warn';
      const progress = new ProgressReporter();
      // A start that cannot happen (a setting, a port in use, the host) is one line to a person, not a stack trace.
      const started = await (async () => {
        const config = loadConfig(env);
        // A node never makes the first team: its API replicas own the public side.
        const platform = await startPlatform(config, { createFirstTeam: config.cluster.role !== 'node', onProgress: (p: BuildProgress) => progress.update(p) });
        return { config, platform };
      })().catch((err: Error) => {
        console.error(`sandpit: cannot start: ${err.message.replace(/\s*\n\s*/g, ' ')}`);
        process.exit(1);
      });
      const { config, platform } = started;
      const isNode = config.cluster.role === 'node';
      await writeServerPid(config.dataDir);
      const stop = async () => {
        // A stop that hangs would hold the port and the data dir forever; what it left is reconciled at the next start.
        const overran = setTimeout(() => {
          console.error(`sandpit: the stop did not finish in ${config.shutdownTimeoutMs / 1000} s (waiting on: ${platform.closingStep ?? 'unknown'}); exiting`);
          void removeServerPid(config.dataDir).finally(() => process.exit(1));
        }, config.shutdownTimeoutMs);
        await platform.close();
        clearTimeout(overran);
        await removeServerPid(config.dataDir);
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);

      if (isNode) {
        console.log(
          `Sandpit node ${config.cluster.nodeId} is up at ${platform.url}  (driver: ${platform.driver.name}, data: ${config.dataDir}); it serves only its API replicas: ${config.cluster.apiUrls.join(', ')}`,
        );
      } else {
        const keyFile = join(config.dataDir, FIRST_KEY_FILE);
        const keyLine = platform.createdKey
          ? `API key (created now, also saved in ${keyFile}):\n    ${platform.createdKey}`
          : config.bootstrapApiKey
            ? 'API key: the value of SANDPIT_BOOTSTRAP_API_KEY'
            : `API key: ${await readFile(keyFile, 'utf8').then(
                () => `in ${keyFile}`,
                () => 'create one with ./sandpit team create <name>',
              )}`;
        console.log(`Sandpit is up at ${platform.url}  (driver: ${platform.driver.name}, data: ${config.dataDir})`);
        if (platform.internalUrl) console.log(`Internal TLS listener (nodes, operators; mutual TLS): ${platform.internalUrl}`);
        console.log(keyLine);
        console.log(`Web console: ${platform.url}/console  (sign in with the API key)`);
        console.log(`Try: curl -s -X POST ${platform.url}/sandboxes -H "X-API-Key: <key>"`);
        if (platform.ssh) {
          console.log(`SSH: ssh -p ${platform.ssh.port} <sandbox-id>@${config.publicHost}  (or ./sandpit ssh <sandbox-id>; keys: ./sandpit ssh-key add)`);
          console.log(`SSH host key: ${platform.ssh.fingerprint}  (${platform.ssh.publicKey})`);
        }
      }
      // Templates are built on nodes; an API replica has none to prepare.
      if (config.cluster.role === 'api') return;
      console.log('Preparing the base template platform/base (first use builds it; later starts reuse the cache)...');
      try {
        const root = await platform.templates.base();
        progress.done(`platform/base ready (${root})`);
      } catch (err) {
        progress.done(`platform/base could not be built: ${(err as Error).message}`);
      }
    });
}
