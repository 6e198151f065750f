// Picks per second of every load balancing policy this build registers (LOAD_BALANCERS, so a
// policy added later is measured without edits here), through a worker's Cluster as the router
// calls it: least request reads each sampled host's rq_active from the stats region. 10, 100
// and 10,000 hosts, all of weight 1 or of weights 1..5; each pick's context carries another
// 64-bit hash key (hashing policies hash it, the others ignore it).
//
//   node dist/bench/lb_picks.js              (part of `make bench`)

import type { LbPolicy } from '../src/config/model';
import { SystemClock } from '../src/common/clock';
import { LiveRuntime } from '../src/runtime/live_runtime';
import { createHeapStatsStore } from '../src/stats/store';
import { Cluster } from '../src/upstream/worker/cluster';
import { type LoadBalancerContext } from '../src/upstream/worker/lb/load_balancer';
import { LOAD_BALANCERS } from '../src/upstream/worker/lb/load_balancer_registry';
import { silentConnectionLogs, silentLogger, staticCluster } from '../test/helpers/data_plane';
import { staticSnapshots } from '../test/helpers/membership';
import { seeded } from '../test/helpers/load_balancer';
import { mathRandom } from '../src/common/random';
import { SecretStore } from '../src/tls/secret_store';

const HOST_COUNTS = [10, 100, 10_000];
const RUN_MS = 300;
const RUNS = 3;
/** Distinct contexts cycled through: a new hash key at every pick, without allocating one. */
const CONTEXTS = 4096;

// Envoy's own figures, where published: test/common/upstream/load_balancer_benchmark.cc.
const ENVOY_FIGURES: Partial<Record<LbPolicy, string>> = {
  LEAST_REQUEST:
    'Envoy P2C, 100 hosts: 1,000,000 picks in 1781 ms CPU (~0.56 M/s, counting hits in a map keyed by address) — envoyproxy/envoy PR #9218 (2019)',
};

function contexts(): LoadBalancerContext[] {
  const random = seeded(1);
  return Array.from({ length: CONTEXTS }, () => ({
    hashKey: (BigInt(random()) << 32n) | BigInt(random()),
    metadataMatch: null,
    downstream: null,
    hostSelectionRetryCount: 0,
    shouldSelectAnotherHost: () => false,
  }));
}

/** A worker's cluster of `n` hosts (Envoy's benchmark addresses: 10.0.i/256.i%256:6379). */
function cluster(policy: LbPolicy, n: number, weighted: boolean): Cluster {
  const store = createHeapStatsStore(16 << 20);
  const endpoints = Array.from({ length: n }, (_, i) => ({ address: `10.0.${i >> 8}.${i & 255}`, port: 6379, weight: weighted ? (i % 5) + 1 : 1 }));
  const config = staticCluster('bench', endpoints, { lbPolicy: policy });
  const [snapshot] = staticSnapshots([config], store.hosts);
  return new Cluster(config, snapshot!, { store, runtime: new LiveRuntime([]), random: mathRandom, readBuffer: Buffer.alloc(1024), log: silentLogger, connectionLogs: silentConnectionLogs, secrets: new SecretStore([]), localLocality: null, reportsTables: true, onConsecutiveFailure: () => undefined, onHostsPicked: () => undefined, clock: new SystemClock() });
}

/** Picks per second: the best of RUNS timed runs of RUN_MS each. */
function measure(c: Cluster, ctx: readonly LoadBalancerContext[]): number {
  let best = 0;
  let sink = 0;
  for (let run = 0; run < RUNS; run++) {
    let picks = 0;
    const t0 = process.hrtime.bigint();
    const until = t0 + BigInt(RUN_MS) * 1_000_000n;
    let now = t0;
    while (now < until) {
      for (let i = 0; i < 10_000; i++) sink += c.chooseHost(ctx[(picks + i) & (CONTEXTS - 1)]!)!.port;
      picks += 10_000;
      now = process.hrtime.bigint();
    }
    best = Math.max(best, picks / (Number(now - t0) / 1e9));
  }
  if (sink === 0) throw new Error('unreachable');
  return best;
}

function main(): void {
  const ctx = contexts();
  const rows: string[][] = [['policy', 'hosts', 'weights', 'picks/s', 'ns/pick']];
  for (const policy of LOAD_BALANCERS.keys()) {
    for (const n of HOST_COUNTS) {
      for (const weighted of [false, true]) {
        const c = cluster(policy, n, weighted);
        const rate = measure(c, ctx);
        c.close();
        rows.push([policy, String(n), weighted ? '1..5' : 'equal', `${(rate / 1e6).toFixed(2)} M`, (1e9 / rate).toFixed(0)]);
      }
    }
  }
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  console.log(`load balancer picks through a worker's Cluster, best of ${RUNS} runs of ${RUN_MS} ms`);
  for (const row of rows) console.log('  ' + row.map((cell, col) => (col < 3 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  '));
  console.log("Envoy's published figures (test/common/upstream/load_balancer_benchmark.cc):");
  for (const policy of LOAD_BALANCERS.keys()) console.log(`  ${policy}: ${ENVOY_FIGURES[policy] ?? 'none found'}`);
}

main();
