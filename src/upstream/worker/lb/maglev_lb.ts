// MAGLEV (Envoy's MaglevLoadBalancer, maglev_lb.cc; the Maglev paper's table population): a
// prime-sized table where each host fills slots along its own permutation (offset and skip
// from xxHash64 of its address with seeds 0 and 1), as often as its weight allows per round.

import { xxHash64Into } from '../../../common/hash/xxhash64';
import type { Gauge, Scope } from '../../../stats/stats';
import type { Host } from '../host';
import type { LoadBalancerParams } from './load_balancer_base';
import { type HashingTable, type NormalizedHostWeights, ThreadAwareLoadBalancer } from './thread_aware_load_balancer';

interface MaglevGauges {
  readonly minEntriesPerHost: Gauge;
  readonly maxEntriesPerHost: Gauge;
}

export class MaglevLoadBalancer extends ThreadAwareLoadBalancer {
  private readonly tableSize: number;
  private readonly useHostname: boolean;
  /** Undefined until the first table; null in a worker that does not report tables. */
  private gauges: MaglevGauges | null | undefined;

  constructor(params: LoadBalancerParams) {
    super(params);
    this.tableSize = params.info.maglevLbConfig.tableSize;
    this.useHostname = params.commonLbConfig.useHostnameForHashing;
  }

  protected createTable(weights: NormalizedHostWeights): HashingTable {
    const table = buildMaglevTable(weights, this.tableSize, this.useHostname);
    if (this.gauges === undefined) this.gauges = maglevGauges(this.info.tableScope('maglev_lb'));
    const gauges = this.gauges;
    if (table.stats !== null && gauges !== null) {
      gauges.minEntriesPerHost.set(table.stats.minEntriesPerHost);
      gauges.maxEntriesPerHost.set(table.stats.maxEntriesPerHost);
    }
    return table;
  }
}

function maglevGauges(scope: Scope | null): MaglevGauges | null {
  return scope === null ? null : { minEntriesPerHost: scope.gauge('min_entries_per_host'), maxEntriesPerHost: scope.gauge('max_entries_per_host') };
}

export class MaglevTable implements HashingTable {
  constructor(
    /** Host index per slot; empty when there are no hosts. */
    readonly entries: Uint32Array,
    readonly hosts: readonly Host[],
    /** Null for an empty table, which Envoy builds without setting its gauges. */
    readonly stats: { readonly minEntriesPerHost: number; readonly maxEntriesPerHost: number } | null,
  ) {}

  chooseHost(hashHi: number, hashLo: number, attempt: number): Host | null {
    const size = this.entries.length;
    if (size === 0) return null;
    if (attempt > 0) {
      // Envoy's perturbation, hash ^= ~0 - attempt + 1 (that is 2^64 - attempt): many bits change.
      hashHi = (hashHi ^ 0xffffffff) >>> 0;
      hashLo = (hashLo ^ -attempt) >>> 0;
    }
    return this.hosts[this.entries[mod64(hashHi, hashLo, size)]];
  }
}

/** Envoy's MaglevTable constructor (the paper's listing 1, with weights). */
export function buildMaglevTable(weights: NormalizedHostWeights, tableSize: number, useHostname: boolean): MaglevTable {
  const { hosts } = weights;
  if (hosts.length === 0) return new MaglevTable(new Uint32Array(0), hosts, null);
  const n = hosts.length;
  const offset = new Float64Array(n);
  const skip = new Float64Array(n);
  const next = new Float64Array(n);
  const targetWeight = new Float64Array(n);
  const count = new Float64Array(n);
  const out = new Uint32Array(2);
  const encoder = new TextEncoder();
  for (let i = 0; i < n; i++) {
    const key = encoder.encode(useHostname ? hosts[i].hostname : hosts[i].addressString);
    xxHash64Into(key, key.length, 0, 0, out, 0);
    offset[i] = mod64(out[0], out[1], tableSize);
    xxHash64Into(key, key.length, 0, 1, out, 0);
    skip[i] = mod64(out[0], out[1], tableSize - 1) + 1;
  }
  // Host indexes are below 2^32 - 1, which marks a slot still empty.
  const EMPTY = 0xffffffff;
  const entries = new Uint32Array(tableSize).fill(EMPTY);
  const max = weights.max;
  let filled = 0;
  for (let iteration = 1; filled < tableSize; iteration++) {
    for (let i = 0; i < n && filled < tableSize; i++) {
      // A host of the largest weight takes a slot every round; one of a third of it, every third.
      if (iteration * weights.weights[i] < targetWeight[i]) continue;
      targetWeight[i] += max;
      let c = (offset[i] + ((skip[i] * next[i]) % tableSize)) % tableSize;
      while (entries[c] !== EMPTY) {
        next[i]++;
        c = (c + skip[i]) % tableSize;
      }
      entries[c] = i;
      next[i]++;
      count[i]++;
      filled++;
    }
  }
  let minEntries = tableSize;
  let maxEntries = 0;
  for (let i = 0; i < n; i++) {
    minEntries = Math.min(count[i], minEntries);
    maxEntries = Math.max(count[i], maxEntries);
  }
  return new MaglevTable(entries, hosts, { minEntriesPerHost: minEntries, maxEntriesPerHost: maxEntries });
}

/** (hi * 2^32 + lo) % m for m below 2^32, exact in doubles: 2^32 applied as two 2^16 steps. */
function mod64(hi: number, lo: number, m: number): number {
  return ((((((hi % m) * 0x10000) % m) * 0x10000) % m) + lo) % m;
}
