// Stats at scale: a bootstrap of STATS_SCALE_CLUSTERS (10,000) STATIC clusters of 3 hosts each,
// served by 2 workers. Prints, without asserting: time to LIVE, the RSS of the supervisor and of
// each worker, the shared memory the stats use (per stat per writer, besides the name), the time
// of a /stats asked at LIVE and of each /stats form after, and what one counter increment costs
// a writer on the real region.
//
//   node dist/bench/stats_scale.js            (part of `make bench`)

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { posixSharedMemory, sharedRegionName } from '../src/shared_memory/posix_shared_memory';
import { StatsRegion } from '../src/shared_memory/region';
import { ColumnState, MAX_COLUMNS, ROOT_BYTES } from '../src/shared_memory/region_layout';
import { SharedStatsStore } from '../src/stats/store';
import { freePort } from './free_port';
import { fetchOnce } from './http_probe';
import { median } from './summary';
import { staticClustersBootstrap } from './proxy_config';

const PROXY_BIN = path.resolve(__dirname, '..', '..', 'bin', 'proxy');
const START_TIMEOUT_MS = 120_000;
const INCREMENTS = 10_000_000;

function rssMiB(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

function childrenOf(pid: number): number[] {
  return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/** Milliseconds to download the whole body of an admin path. */
function timeGet(port: number, pathAndQuery: string): Promise<{ ms: number; bytes: number; status: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: pathAndQuery }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve({ ms: performance.now() - started, bytes, status: res.statusCode ?? 0 }));
      })
      .on('error', reject);
  });
}

async function main(): Promise<void> {
  const clusters = Number(process.env.STATS_SCALE_CLUSTERS ?? 10_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-bench-stats-'));
  const upstream = http.createServer((_req, res) => res.end('Hello, World!'));
  await new Promise<void>((r) => upstream.listen(0, '0.0.0.0', () => r()));
  const upstreamPort = (upstream.address() as { port: number }).port;
  const [listenPort, adminPort] = [await freePort(), await freePort()];
  const config = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(config, JSON.stringify(staticClustersBootstrap(clusters, upstreamPort, listenPort, adminPort)));
  const baseId = 300_000 + (process.pid % 100_000);
  const started = performance.now();
  // The executable, as an operator runs it (its #! line applies).
  const child = spawn(PROXY_BIN, ['-c', config, '--base-id', String(baseId), '--concurrency', '2', '-l', 'error'], {
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
    const live = performance.now() - started;
    const served = await fetchOnce(listenPort, '/');
    if (served.body !== 'Hello, World!') throw new Error(`the proxy answered ${served.status} ${served.body}`);
    const rss = [rssMiB(child.pid!), ...childrenOf(child.pid!).map(rssMiB)];
    // Asked at once: it waits for the supervisor's one-time sort of every name, begun at LIVE.
    const atLive = await timeGet(adminPort, '/stats');
    console.log(`stats_scale: ${clusters} clusters x 3 hosts, --concurrency 2`);
    console.log(`  time to LIVE            ${(live / 1000).toFixed(2)} s (target: under 3 s)`);
    console.log(`  RSS at LIVE             supervisor ${rss[0]!.toFixed(0)} MiB, workers ${rss.slice(1).map((r) => `${r.toFixed(0)} MiB`).join(', ')}`);
    console.log(`  GET /stats at LIVE      ${atLive.ms.toFixed(0)} ms (the supervisor sorts every name once, from LIVE on)`);

    const region = StatsRegion.attach({ memory: posixSharedMemory, name: sharedRegionName(baseId), pid: process.pid });
    const store = new SharedStatsStore(region, region.claimColumn(region.currentEpoch, process.pid));
    let stats = 0;
    let nameBytes = 0;
    store.names.forEachReady((slot) => {
      stats++;
      nameBytes += Buffer.byteLength(store.names.name(slot));
    });
    const writers = Array.from({ length: MAX_COLUMNS }, (_, c) => region.columnState(c)).filter((s) => s !== ColumnState.Free).length - 1;
    const { used, reserved } = region.segments.usage();
    const perStatPerWriter = (used + ROOT_BYTES - nameBytes) / stats / writers;
    console.log(`  stats                   ${stats} names (${(nameBytes / stats).toFixed(1)} bytes each), ${writers} writers`);
    console.log(`  shared memory           ${((used + ROOT_BYTES) / 2 ** 20).toFixed(1)} MiB in use, ${((reserved + ROOT_BYTES) / 2 ** 20).toFixed(1)} MiB reserved`);
    console.log(`                          ${perStatPerWriter.toFixed(1)} bytes per stat per writer besides the name`);

    for (const form of ['/stats', '/stats?format=json', '/stats/prometheus']) {
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push(await timeGet(adminPort, form));
      const r = runs[0]!;
      console.log(
        `  GET ${form.padEnd(20)} ${r.status} ${(r.bytes / 2 ** 20).toFixed(1)} MiB: first ${r.ms.toFixed(0)} ms, median ${median(runs.map((x) => x.ms)).toFixed(0)} ms (target: under 1 s)`,
      );
    }

    const counter = store.counter('bench.stats_scale.increments');
    counter.inc();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < INCREMENTS; i++) counter.inc();
    const ns = Number(process.hrtime.bigint() - t0) / INCREMENTS;
    console.log(`  counter increment       ${ns.toFixed(1)} ns (one Float64Array store on the mapped region)`);
    region.retireColumn(store.column);
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
