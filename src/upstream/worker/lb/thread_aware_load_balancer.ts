// The hashing balancers' shared part (Envoy's ThreadAwareLoadBalancerBase, thread_aware_lb_impl.cc):
// per priority, a lookup table built at refresh from the normalized weights of the hosts a pick
// may use; a pick hashes once, chooses the priority from that hash, then asks the table, with
// the attempt number on retries so that a refused host moves the pick.

import type { Host } from '../host';
import type { HostSet } from '../priority_set';
import type { LoadBalancerContext } from './load_balancer';
import { LoadBalancerBase } from './load_balancer_base';

/** Hosts with weights summing to at most 1 (less when a weighted locality has no usable host). */
export interface NormalizedHostWeights {
  readonly hosts: readonly Host[];
  readonly weights: readonly number[];
  /** 1 and 0 when there are no hosts, as Envoy starts them. */
  readonly min: number;
  readonly max: number;
}

/** One priority's table: a host for a 64-bit hash given as unsigned 32-bit halves. */
export interface HashingTable {
  chooseHost(hashHi: number, hashLo: number, attempt: number): Host | null;
}

interface PriorityState {
  readonly table: HashingTable;
  readonly panic: boolean;
}

export abstract class ThreadAwareLoadBalancer extends LoadBalancerBase {
  private states: readonly PriorityState[] = [];
  // The hash and table of the pick in progress: chooseHost's attempts reuse attempt 0's, as
  // Envoy hashes (or draws) once per pick.
  private pickHi = 0;
  private pickLo = 0;
  private pickState: PriorityState | null = null;

  override refresh(): void {
    super.refresh();
    this.states = this.prioritySet.hostSetsPerPriority.map((hostSet) => {
      const panic = this.priorityLoad.panic[hostSet.priority];
      return { table: this.createTable(normalizeWeights(hostSet, panic, this.commonLbConfig.localityWeighted)), panic };
    });
  }

  /** The policy's table over `weights`; built at each refresh, so it also sets the policy's gauges. */
  protected abstract createTable(weights: NormalizedHostWeights): HashingTable;

  protected chooseHostOnce(context: LoadBalancerContext | null, attempt: number): Host | null {
    if (attempt === 0) {
      const key = context?.hashKey ?? null;
      if (key === null) {
        // No hash policy applied: a random 64-bit value, so the policy degrades to random picks.
        this.pickHi = this.random() >>> 0;
        this.pickLo = this.random() >>> 0;
      } else {
        const h = BigInt.asUintN(64, key);
        this.pickHi = Number(h >> 32n);
        this.pickLo = Number(h & 0xffffffffn);
      }
      // hash % 100 of the 64-bit value, from its halves: 2^32 % 100 is 96.
      const { hostSet } = this.chooseHostSet(((this.pickHi % 100) * 96 + (this.pickLo % 100)) % 100);
      this.pickState = this.states[hostSet.priority] ?? null;
      if (this.pickState?.panic === true) this.info.stats.counters.lb_healthy_panic.inc();
    }
    return this.pickState === null ? null : this.pickState.table.chooseHost(this.pickHi, this.pickLo, attempt);
  }
}

/**
 * Envoy's normalizeWeights: the healthy hosts (all of them in panic), each weight divided by
 * their sum; locality-weighted, each locality's hosts share its fraction of the locality
 * weights' sum, and localities of weight 0 are left out.
 */
export function normalizeWeights(hostSet: HostSet, panic: boolean, localityWeighted: boolean): NormalizedHostWeights {
  const hosts: Host[] = [];
  const weights: number[] = [];
  let min = 1;
  let max = 0;
  const add = (group: readonly Host[], share: number) => {
    let sum = 0;
    for (const host of group) sum += host.weight;
    for (const host of group) {
      const weight = (host.weight * share) / sum;
      hosts.push(host);
      weights.push(weight);
      min = Math.min(min, weight);
      max = Math.max(max, weight);
    }
  };
  if (!localityWeighted || hostSet.localityWeights.length === 0) {
    add(panic ? hostSet.hosts : hostSet.healthyHosts, 1);
  } else {
    const perLocality = panic ? hostSet.hostsPerLocality : hostSet.healthyHostsPerLocality;
    let sum = 0;
    for (const w of hostSet.localityWeights) sum += w;
    if (sum !== 0) {
      hostSet.localityWeights.forEach((w, i) => {
        if (w !== 0) add(perLocality.hosts[i], w / sum);
      });
    }
  }
  return { hosts, weights, min, max };
}
