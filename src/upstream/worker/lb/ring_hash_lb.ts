// RING_HASH (Envoy's RingHashLoadBalancer, ring_hash_lb.cc): each host gets points on a 64-bit
// ring in proportion to its normalized weight, at the hashes of "<address>_<i>"; a request goes
// to the first point at or after its hash. Millions of points: kept as parallel typed arrays
// (hash halves and host index), sorted by a radix sort, searched without allocation.

import { murmurHash2Into, STD_HASH_SEED } from '../../../common/hash/murmur_hash2';
import { xxHash64Into } from '../../../common/hash/xxhash64';
import type { RingHashLbConfig } from '../../../config/model';
import type { Gauge, Scope } from '../../../stats/stats';
import type { Host } from '../host';
import type { LoadBalancerParams } from './load_balancer_base';
import { type HashingTable, type NormalizedHostWeights, ThreadAwareLoadBalancer } from './thread_aware_load_balancer';

interface RingGauges {
  readonly size: Gauge;
  readonly minHashesPerHost: Gauge;
  readonly maxHashesPerHost: Gauge;
}

export class RingHashLoadBalancer extends ThreadAwareLoadBalancer {
  private readonly config: RingHashLbConfig;
  private readonly useHostname: boolean;
  /** Undefined until the first table; null in a worker that does not report tables. */
  private gauges: RingGauges | null | undefined;

  constructor(params: LoadBalancerParams) {
    super(params);
    this.config = params.info.ringHashLbConfig;
    this.useHostname = params.commonLbConfig.useHostnameForHashing;
  }

  protected createTable(weights: NormalizedHostWeights): HashingTable {
    const ring = buildRing(weights, this.config, this.useHostname);
    if (this.gauges === undefined) this.gauges = ringGauges(this.info.tableScope('ring_hash_lb'));
    const gauges = this.gauges;
    if (ring.stats !== null && gauges !== null) {
      gauges.size.set(ring.stats.size);
      gauges.minHashesPerHost.set(ring.stats.minHashesPerHost);
      gauges.maxHashesPerHost.set(ring.stats.maxHashesPerHost);
    }
    return ring;
  }
}

function ringGauges(scope: Scope | null): RingGauges | null {
  return scope === null ? null : { size: scope.gauge('size'), minHashesPerHost: scope.gauge('min_hashes_per_host'), maxHashesPerHost: scope.gauge('max_hashes_per_host') };
}

export interface RingStats {
  /** ceil(scale), as Envoy reports it (the entries may differ by float rounding). */
  readonly size: number;
  readonly minHashesPerHost: number;
  readonly maxHashesPerHost: number;
}

export class Ring implements HashingTable {
  constructor(
    /** Sorted ascending by (hashHi, hashLo). */
    readonly hashHi: Uint32Array,
    readonly hashLo: Uint32Array,
    /** Index into hosts, parallel to the hashes. */
    readonly hostIndex: Uint32Array,
    readonly hosts: readonly Host[],
    /** Null for an empty ring, which Envoy builds without setting its gauges. */
    readonly stats: RingStats | null,
  ) {}

  /** Ketama's search (Envoy's port of ketama_get_server): the first point with hash >= h, wrapping to 0. */
  chooseHost(hashHi: number, hashLo: number, attempt: number): Host | null {
    const size = this.hashHi.length;
    if (size === 0) return null;
    const his = this.hashHi;
    const los = this.hashLo;
    let low = 0;
    let high = size;
    let mid = 0;
    for (;;) {
      mid = Math.floor((low + high) / 2);
      if (mid === size) {
        mid = 0;
        break;
      }
      const midHi = his[mid];
      const midLo = los[mid];
      // h <= ring[mid] && h > ring[mid - 1] (0 before the first point)
      const atOrBelowMid = hashHi < midHi || (hashHi === midHi && hashLo <= midLo);
      const aboveBefore = mid === 0 ? hashHi !== 0 || hashLo !== 0 : hashHi > his[mid - 1] || (hashHi === his[mid - 1] && hashLo > los[mid - 1]);
      if (atOrBelowMid && aboveBefore) break;
      if (!atOrBelowMid) low = mid + 1;
      else high = mid - 1;
      if (low > high) {
        mid = 0;
        break;
      }
    }
    // A retry looks further along the ring, as if the refused point were not there.
    if (attempt > 0) mid = (mid + attempt) % size;
    return this.hosts[this.hostIndex[mid]];
  }
}

/** Envoy's Ring constructor: the points of every host, sorted. */
export function buildRing(weights: NormalizedHostWeights, config: RingHashLbConfig, useHostname: boolean): Ring {
  const { hosts } = weights;
  if (hosts.length === 0) return new Ring(new Uint32Array(0), new Uint32Array(0), new Uint32Array(0), hosts, null);
  // The smallest weight gets at least minimum_ring_size * weight points, the ring at most the maximum.
  const scale = Math.min(Math.ceil(weights.min * config.minimumRingSize) / weights.min, config.maximumRingSize);
  const ringSize = Math.ceil(scale);
  // Running sums of doubles can add a point past ceil(scale); one spare per host bounds that.
  const capacity = ringSize + hosts.length;
  let hashHi = new Uint32Array(capacity);
  let hashLo = new Uint32Array(capacity);
  let hostIndex = new Uint32Array(capacity);
  const out = new Uint32Array(2);
  const hash = config.hashFunction === 'MURMUR_HASH_2' ? murmurHash2Into : xxHash64Into;
  const seedLo = config.hashFunction === 'MURMUR_HASH_2' ? Number(STD_HASH_SEED) : 0;
  const encoder = new TextEncoder();
  let key = new Uint8Array(64);
  let current = 0;
  let target = 0;
  let count = 0;
  let minHashes = ringSize;
  let maxHashes = 0;
  for (let h = 0; h < hosts.length; h++) {
    const host = hosts[h];
    const prefix = encoder.encode(`${useHostname ? host.hostname : host.addressString}_`);
    if (key.length < prefix.length + 20) key = new Uint8Array(prefix.length + 20);
    key.set(prefix);
    target += scale * weights.weights[h];
    let i = 0;
    while (current < target) {
      const length = writeDecimal(key, prefix.length, i);
      hash(key, length, 0, seedLo, out, 0);
      hashHi[count] = out[0];
      hashLo[count] = out[1];
      hostIndex[count] = h;
      count++;
      i++;
      current++;
    }
    minHashes = Math.min(i, minHashes);
    maxHashes = Math.max(i, maxHashes);
  }
  hashHi = hashHi.subarray(0, count);
  hashLo = hashLo.subarray(0, count);
  hostIndex = hostIndex.subarray(0, count);
  radixSortByHash(hashHi, hashLo, hostIndex);
  return new Ring(hashHi, hashLo, hostIndex, hosts, { size: ringSize, minHashesPerHost: minHashes, maxHashesPerHost: maxHashes });
}

/** Writes `n`'s decimal digits at key[at], returning the key's length. */
function writeDecimal(key: Uint8Array, at: number, n: number): number {
  if (n === 0) {
    key[at] = 0x30;
    return at + 1;
  }
  let digits = 0;
  for (let m = n; m > 0; m = Math.floor(m / 10)) digits++;
  for (let p = at + digits - 1; p >= at; p--) {
    key[p] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  }
  return at + digits;
}

/**
 * Sorts the points by 64-bit hash, least significant 16 bits first, keeping equal hashes in
 * build order (Envoy's std::sort leaves their order unspecified).
 */
function radixSortByHash(hi: Uint32Array, lo: Uint32Array, index: Uint32Array): void {
  const n = hi.length;
  let srcHi: Uint32Array = hi;
  let srcLo: Uint32Array = lo;
  let srcIndex: Uint32Array = index;
  let dstHi: Uint32Array = new Uint32Array(n);
  let dstLo: Uint32Array = new Uint32Array(n);
  let dstIndex: Uint32Array = new Uint32Array(n);
  const counts = new Uint32Array(65536);
  for (let pass = 0; pass < 4; pass++) {
    const digits = pass < 2 ? srcLo : srcHi;
    const shift = pass % 2 === 0 ? 0 : 16;
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[(digits[i] >>> shift) & 0xffff]++;
    let sum = 0;
    for (let d = 0; d < 65536; d++) {
      const c = counts[d];
      counts[d] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const at = counts[(digits[i] >>> shift) & 0xffff]++;
      dstHi[at] = srcHi[i];
      dstLo[at] = srcLo[i];
      dstIndex[at] = srcIndex[i];
    }
    [srcHi, dstHi] = [dstHi, srcHi];
    [srcLo, dstLo] = [dstLo, srcLo];
    [srcIndex, dstIndex] = [dstIndex, srcIndex];
  }
  // Four passes leave the result back in the caller's arrays.
}
