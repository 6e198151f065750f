// CDS at scale: a proxy with 2 workers and file-based CDS starts with no dynamic cluster; one
// atomic rename then pushes CDS_SCALE_CLUSTERS (10,000) STATIC clusters of one host each.
// Prints, without asserting: the time from the rename until the supervisor has them all active
// (cluster_manager.active_clusters), and until both workers route to the last one, and the
// longest GET /ready took meanwhile (how long the update held the supervisor's event loop). The
// supervisor sends each warmed cluster to every worker in activation order over an ordered
// channel, so a worker that serves the last cluster has built all of them.
//
//   node dist/bench/cds_scale.js            (part of `make bench`)

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { posixSharedMemory, sharedRegionName } from '../src/shared_memory/posix_shared_memory';
import { StatsRegion } from '../src/shared_memory/region';
import { socketOwner } from '../test/helpers/socket_owner';
import { pollLatency } from './admin_latency';
import { freePort } from './free_port';
import { fetchOnce } from './http_probe';
import { childrenOf, stat, until } from './proxy_probes';
import { routeAllBenchListener } from './proxy_config';

const PROXY_BIN = path.resolve(__dirname, '..', '..', 'bin', 'proxy');
const START_TIMEOUT_MS = 60_000;
const PUSH_TIMEOUT_MS = 600_000;
const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

const socket = (address: string, port: number) => ({ socket_address: { address, port_value: port } });

function bootstrap(cdsPath: string, lastCluster: string, listenPort: number, adminPort: number): unknown {
  return {
    node: { id: 'bench', cluster: 'bench' },
    admin: { access_log_path: '/dev/null', address: socket('127.0.0.1', adminPort) },
    dynamic_resources: { cds_config: { path: cdsPath } },
    static_resources: {
      listeners: [routeAllBenchListener(listenPort, lastCluster, { validate_clusters: false })],
    },
  };
}

function pushCds(cdsPath: string, version: string, clusters: number, upstreamPort: number): void {
  const resources = Array.from({ length: clusters }, (_, i) => ({
    '@type': CLUSTER_TYPE,
    name: `c${i}`,
    connect_timeout: '1s',
    load_assignment: { cluster_name: `c${i}`, endpoints: [{ lb_endpoints: [{ endpoint: { address: socket('127.0.0.1', upstreamPort) } }] }] },
  }));
  const aside = `${cdsPath}.tmp`;
  fs.writeFileSync(aside, JSON.stringify({ version_info: version, resources }));
  fs.renameSync(aside, cdsPath);
}

async function main(): Promise<void> {
  const clusters = Number(process.env.CDS_SCALE_CLUSTERS ?? 10_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-bench-cds-'));
  let workers: number[] = [];
  const seen = new Set<number>();
  const upstream = http.createServer((req, res) => {
    const owner = socketOwner(req.socket.remotePort!, workers);
    if (owner !== undefined) seen.add(owner);
    res.end('ok');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const upstreamPort = (upstream.address() as { port: number }).port;
  const [listenPort, adminPort] = [await freePort(), await freePort()];
  const cdsPath = path.join(dir, 'cds.json');
  pushCds(cdsPath, '0', 0, upstreamPort);
  const config = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(config, JSON.stringify(bootstrap(cdsPath, `c${clusters - 1}`, listenPort, adminPort)));
  const baseId = 310_000 + (process.pid % 100_000);
  const child = spawn(process.execPath, [PROXY_BIN, '-c', config, '--base-id', String(baseId), '--concurrency', '2', '-l', 'error'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const startDeadline = performance.now() + START_TIMEOUT_MS;
    await until('/ready', startDeadline, async () => {
      if (child.exitCode !== null) throw new Error(`the proxy exited with ${child.exitCode}`);
      return (await fetchOnce(adminPort, '/ready')).status === 200;
    });
    workers = childrenOf(child.pid!);
    if (workers.length !== 2) throw new Error(`expected 2 workers, found ${workers.length}`);
    const before = await fetchOnce(listenPort, '/');
    if (before.status !== 503) throw new Error(`before the push the proxy answered ${before.status}`);

    const admin = pollLatency(adminPort, '/ready', 50);
    const pushed = performance.now();
    pushCds(cdsPath, '1', clusters, upstreamPort);
    const deadline = pushed + PUSH_TIMEOUT_MS;
    // Both at once; the /stats probe, which costs the supervisor a render, less often.
    const [supervisor, bothWorkers] = await Promise.all([
      until('every cluster active in the supervisor', deadline, async () => (await stat(adminPort, 'cluster_manager.active_clusters')) === clusters, 250),
      until('both workers to route to the last cluster', deadline, async () => {
        // Each request on its own connection, so that both workers take some.
        await Promise.all(Array.from({ length: 4 }, () => fetchOnce(listenPort, '/')));
        return workers.every((w) => seen.has(w));
      }),
    ]);
    const worstAdmin = await admin.stop();
    console.log(`cds_scale: ${clusters} STATIC clusters x 1 host pushed by one rename of the CDS file, --concurrency 2`);
    console.log(`  all active in the supervisor    ${((supervisor - pushed) / 1000).toFixed(2)} s (polled every 250 ms)`);
    console.log(`  all active in both workers      ${((bothWorkers - pushed) / 1000).toFixed(2)} s`);
    console.log(`  worst admin GET /ready          ${worstAdmin.toFixed(0)} ms (polled every 50 ms through the push)`);
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    // A hot-restart region outlives its epochs (the next epoch 0 replaces it): remove it.
    StatsRegion.unlinkStale(posixSharedMemory, sharedRegionName(baseId));
    upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
