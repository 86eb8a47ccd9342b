import { join } from 'node:path';
import { Command } from 'commander';
import { integer, printJson, printTable, run } from '../api.ts';
import { loadServer } from '../server-module.ts';

interface DirOption {
  dir?: string;
}

/** The cluster's directory: --dir, else `cluster` under the data directory (/var/lib/sandpit/cluster). */
async function clusterDir(opts: DirOption): Promise<string> {
  if (opts.dir) return opts.dir;
  const { loadConfig } = await loadServer();
  return join(loadConfig(process.env).dataDir, 'cluster');
}

const dirOption = ['--dir <dir>', 'the cluster directory (default: $SANDPIT_DATA_DIR/cluster)'] as const;
const collect = (value: string, into: string[]) => [...into, value];

/** A whole installation on this machine: PostgreSQL, API replicas and nodes, each its own process. */
export function clusterCommand(): Command {
  const cluster = new Command('cluster').description('a local cluster on this machine: PostgreSQL, two API replicas and N nodes per region');
  cluster
    .command('up')
    .description('start PostgreSQL, two API replicas and N nodes per region, and wait until all are ready')
    .option('--regions <names>', 'comma-separated region names', 'local')
    .option('--nodes <n>', 'nodes per region', integer, 2)
    .option('--json', 'print { api_key, regions: [{ name, api_urls, nodes }] }')
    .option(...dirOption)
    .action(
      run(async (opts: DirOption & { regions: string; nodes: number; json?: boolean }) => {
        const { LocalCluster, parseRegions } = await loadServer();
        if (opts.nodes < 0) throw new Error('--nodes must be 0 or more');
        const dir = await clusterDir(opts);
        // Ctrl-C while starting: what was started is stopped and removed before the command ends.
        const interrupt = new AbortController();
        const onSigint = () => {
          console.error('interrupted: stopping what was started');
          interrupt.abort(new Error('interrupted'));
        };
        process.once('SIGINT', onSigint);
        const c = await LocalCluster.up({
          dir,
          signal: interrupt.signal,
          regions: parseRegions(opts.regions),
          nodesPerRegion: opts.nodes,
          onProgress: (line) => {
            if (!opts.json) console.error(line);
          },
        });
        process.off('SIGINT', onSigint);
        const summary = c.summary();
        if (opts.json) return console.log(JSON.stringify(summary));
        console.log(`Sandpit cluster up in ${c.dir} (logs in ${join(c.dir, 'logs')})`);
        console.log(`API key: ${summary.api_key}`);
        for (const r of summary.regions) {
          console.log(`region ${r.name}: APIs ${r.api_urls.join(', ')}; nodes ${r.nodes.join(', ') || '(none)'}`);
        }
        console.log(`Try: SANDPIT_API_URL=${summary.regions[0]?.api_urls[0]} SANDPIT_API_KEY=${summary.api_key} ./sandpit sandbox create`);
        console.log(`Stop it with: ./sandpit cluster down${opts.dir ? ` --dir ${opts.dir}` : ''}`);
      }),
    );
  cluster
    .command('down')
    .description('stop every process of the cluster, release what its nodes hold on the host, stop PostgreSQL, remove its files')
    .option(...dirOption)
    .action(
      run(async (opts: DirOption) => {
        const { LocalCluster } = await loadServer();
        const dir = await clusterDir(opts);
        const found = await LocalCluster.down(dir, { onProgress: (line) => console.error(line) });
        console.log(found ? `cluster in ${dir} stopped and removed` : `no cluster in ${dir}`);
      }),
    );
  cluster
    .command('status')
    .description('APIs up or not; nodes with state, capacity and load')
    .option('--json', 'print JSON')
    .option(...dirOption)
    .action(
      run(async (opts: DirOption & { json?: boolean }) => {
        const { LocalCluster } = await loadServer();
        const c = await LocalCluster.open(await clusterDir(opts));
        const status = await c.status().finally(() => c.close());
        if (opts.json) return printJson(status);
        for (const r of status.regions) {
          console.log(`region ${r.name}`);
          printTable(
            ['API', 'URL', 'PID', 'STATUS'],
            r.apis.map((a) => [a.name, a.url, String(a.pid ?? '-'), a.up ? 'up' : a.running ? 'not answering' : 'not running']),
          );
          printTable(
            ['NODE', 'URL', 'PID', 'STATE', 'SANDBOXES', 'VCPUS', 'MEMORY MIB'],
            r.nodes.map((n) => [
              n.id,
              n.url,
              String(n.pid ?? '-'),
              n.running ? n.state : `${n.state} (process not running)`,
              n.sandboxes === undefined ? '-' : n.max_sandboxes ? `${n.sandboxes}/${n.max_sandboxes}` : String(n.sandboxes),
              n.vcpus === undefined ? '-' : `${n.allocated_vcpus}/${n.vcpus}`,
              n.memory_mib === undefined ? '-' : `${n.allocated_memory_mib}/${n.memory_mib}`,
            ]),
          );
        }
      }),
    );
  cluster
    .command('rotate-certs')
    .description('issue new certificates for every member and the operator while the cluster runs (--new-ca: from a new cluster CA that replaces the old); waits until every member uses them')
    .option('--new-ca', 'replace the cluster CA too')
    .option(...dirOption)
    .action(
      run(async (opts: DirOption & { newCa?: boolean }) => {
        const { LocalCluster } = await loadServer();
        const c = await LocalCluster.open(await clusterDir(opts));
        await c.rotateCertificates({ newCa: opts.newCa, onProgress: (line) => console.error(line) }).finally(() => c.close());
        console.log(`certificates rotated${opts.newCa ? ' (new CA)' : ''} in ${c.certs.dir}`);
      }),
    );
  cluster
    .command('certs')
    .description(
      'write a cluster CA and certificates of the roles api, node and operator for members run outside `cluster up` (Kubernetes: docs/kubernetes.md); with --ca-dir, new certificates from an existing CA',
    )
    .requiredOption('--out <dir>', 'where the files go (a directory that holds a ca.key is refused, unless it is that of --ca-dir)')
    .option('--api-host <name>', "a name or address the API replicas' internal listener is reached at, in api.crt (repeatable; localhost and 127.0.0.1 are always in)", collect, [])
    .option('--ca-dir <dir>', 'issue from the ca.crt and ca.key in this directory instead of a new CA (rotation)')
    .action(
      run(async (opts: { out: string; apiHost: string[]; caDir?: string }) => {
        const { writeRoleCerts } = await loadServer();
        const written = await writeRoleCerts(opts);
        console.log(`wrote ${written.join(', ')} in ${opts.out}`);
        const secret = ['ca.crt', 'api.crt', 'api.key', 'node.crt', 'node.key'].map((f) => `--from-file=${join(opts.out, f)}`).join(' ');
        console.log(`Kubernetes (creates or updates; ca.key and operator.key stay out of the cluster):`);
        console.log(`  kubectl -n <namespace> create secret generic sandpit-tls ${secret} --dry-run=client -o yaml | kubectl apply -f -`);
      }),
    );
  for (const [action, description] of [
    ['cordon', 'place no new sandboxes on a node'],
    ['uncordon', 'let a cordoned or drained node take sandboxes again'],
    ['drain', 'cordon a node and move its sandboxes (running and paused) to other nodes'],
  ] as const) {
    cluster
      .command(`${action} [node]`)
      .description(description)
      .option(...dirOption)
      .option(
        '--via-env',
        "act through the API replicas in $SANDPIT_API_URL, signed with $SANDPIT_CLUSTER_KEY, instead of a local cluster; [node] defaults to $SANDPIT_NODE_ID (a node's own settings, as in a Kubernetes preStop hook)",
      )
      .action(
        run(async (given: string | undefined, opts: DirOption & { viaEnv?: boolean }) => {
          const { InternalApi, InternalChannel, LocalCluster, loadConfig } = await loadServer();
          let node = given;
          let drained: Awaited<ReturnType<InstanceType<typeof InternalApi>['act']>>;
          if (opts.viaEnv) {
            const { cluster: settings } = loadConfig(process.env);
            node ??= process.env.SANDPIT_NODE_ID;
            if (!node) throw new Error('name the node, or set SANDPIT_NODE_ID');
            if (!settings.key) throw new Error('SANDPIT_CLUSTER_KEY is not set');
            // A node's own certificate when the channel has mutual TLS (its API URLs are then the replicas' internal listeners).
            const api = new InternalApi(settings.key, settings.tls ? await InternalChannel.tls(settings.tls) : undefined);
            try {
              drained = await api.actOnAny(settings.apiUrls, node, action);
            } finally {
              api.close();
            }
          } else {
            if (!node) throw new Error('name the node');
            const c = await LocalCluster.open(await clusterDir(opts));
            drained = await c.nodeAction(node, action).finally(() => c.close());
          }
          console.log(`${node}: ${action} done`);
          if (drained) {
            console.log(`moved ${drained.moved.length} sandbox(es); ${drained.left} left on the node (those that cannot move: on crun, or mounting volumes)`);
            for (const f of drained.failed) console.log(`  ${f.id}: not moved: ${f.message}`);
          }
        }),
      );
  }
  return cluster;
}
