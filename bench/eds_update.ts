// EDS at scale: one EDS cluster of EDS_ENDPOINTS (1,000) endpoints read from a file, served by
// 2 workers. Each round replaces the whole set by an atomic rename of the file and prints,
// without asserting, how long until a request through the proxy first reaches an endpoint of the
// new set, and until 20 requests in a row (each on a new connection, so both workers take some)
// all do. One upstream listens on every loopback address; the address a request arrived on
// tells which endpoint the proxy picked.
//
//   node dist/bench/eds_update.js            (part of `make bench`)

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from './free_port';
import { fetchOnce } from './http_probe';
import { median } from './summary';
import { routeAllBenchListener } from './proxy_config';

const PROXY_BIN = path.resolve(__dirname, '..', '..', 'bin', 'proxy');
const START_TIMEOUT_MS = 60_000;
const SWITCH_TIMEOUT_MS = 60_000;
const ROUNDS = 5;
const ALL_NEW_IN_A_ROW = 20;
const CLA = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';

/** Endpoint `i` of set `set` (0 or 1): a loopback address of its own, 127.<set+1>.x.y. */
function address(set: number, i: number): string {
  return `127.${set + 1}.${Math.floor(i / 250)}.${(i % 250) + 1}`;
}

function assignmentFile(set: number, endpoints: number, port: number, version: number): string {
  const lbEndpoints = Array.from({ length: endpoints }, (_, i) => ({ endpoint: { address: { socket_address: { address: address(set, i), port_value: port } } } }));
  return JSON.stringify({ version_info: String(version), resources: [{ '@type': CLA, cluster_name: 'eds', endpoints: [{ lb_endpoints: lbEndpoints }] }] });
}

function bootstrap(edsFile: string, listenPort: number, adminPort: number): unknown {
  const socket = (address: string, port: number) => ({ socket_address: { address, port_value: port } });
  return {
    admin: { access_log_path: '/dev/null', address: socket('127.0.0.1', adminPort) },
    static_resources: {
      listeners: [routeAllBenchListener(listenPort, 'eds')],
      clusters: [{ name: 'eds', type: 'EDS', connect_timeout: '1s', eds_cluster_config: { eds_config: { path: edsFile } } }],
    },
  };
}

/** The set (0 or 1) of the endpoint a request through the proxy reached. */
async function pickedSet(listenPort: number): Promise<number> {
  const response = await fetchOnce(listenPort, '/');
  if (response.status !== 200) throw new Error(`the proxy answered ${response.status} ${response.body}`);
  return Number(response.body.split('.')[1]) - 1;
}

async function main(): Promise<void> {
  const endpoints = Number(process.env.EDS_ENDPOINTS ?? 1_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-bench-eds-'));
  // Every 127/8 address is the loopback interface's: one server answers for all endpoints.
  const upstream = http.createServer((req, res) => res.end(req.socket.localAddress));
  await new Promise<void>((r) => upstream.listen(0, '0.0.0.0', () => r()));
  const upstreamPort = (upstream.address() as { port: number }).port;
  const [listenPort, adminPort] = [await freePort(), await freePort()];
  const edsFile = path.join(dir, 'eds.json');
  const publish = (set: number, version: number) => {
    fs.writeFileSync(`${edsFile}.tmp`, assignmentFile(set, endpoints, upstreamPort, version));
    fs.renameSync(`${edsFile}.tmp`, edsFile);
  };
  publish(0, 1);
  const config = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(config, JSON.stringify(bootstrap(edsFile, listenPort, adminPort)));
  const started = performance.now();
  const child = spawn(process.execPath, [PROXY_BIN, '-c', config, '--disable-hot-restart', '--concurrency', '2', '-l', 'error'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the proxy exited with ${child.exitCode}`);
      const ready = await fetchOnce(adminPort, '/ready').catch(() => null);
      if (ready?.status === 200) break;
      if (performance.now() - started > START_TIMEOUT_MS) throw new Error(`not LIVE within ${START_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
    if ((await pickedSet(listenPort)) !== 0) throw new Error('the first request missed the first set');
    console.log(`eds_update: one EDS cluster of ${endpoints} endpoints from a file, --concurrency 2, ${ROUNDS} rounds replacing the whole set`);
    console.log(`  file size               ${(fs.statSync(edsFile).size / 1024).toFixed(0)} KiB`);
    const firstPick: number[] = [];
    const allNew: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const set = round % 2;
      const t0 = performance.now();
      publish(set, round + 1);
      let first = 0;
      let inARow = 0;
      while (inARow < ALL_NEW_IN_A_ROW) {
        if (performance.now() - t0 > SWITCH_TIMEOUT_MS) throw new Error(`round ${round}: the new set was not picked within ${SWITCH_TIMEOUT_MS} ms`);
        if ((await pickedSet(listenPort)) === set) {
          if (first === 0) first = performance.now() - t0;
          inARow++;
        } else {
          inARow = 0;
        }
      }
      firstPick.push(first);
      allNew.push(performance.now() - t0);
    }
    const show = (runs: number[]) => `median ${median(runs).toFixed(0)} ms, max ${Math.max(...runs).toFixed(0)} ms`;
    console.log(`  first pick from new set ${show(firstPick)} (from the rename)`);
    console.log(`  ${ALL_NEW_IN_A_ROW} picks in a row new  ${show(allNew)} (both workers switched)`);
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
