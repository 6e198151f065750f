// The first step of locality-weighted balancing (Envoy's HostSetImpl locality schedulers): a
// priority's localities picked by EDF in proportion to their effective weight, that is their
// load_balancing_weight scaled down once too few of their hosts are available.

import type { HostSet, HostsPerLocality } from '../priority_set';
import { EdfScheduler } from './edf_scheduler';

interface LocalityEntry {
  /** In the priority's hostsPerLocality. */
  readonly index: number;
  readonly weight: number;
}

export class LocalityScheduler {
  private constructor(private readonly edf: EdfScheduler<LocalityEntry>) {}

  /**
   * The schedule over the localities of `hostSet` whose `eligible` hosts (its healthy or its
   * degraded ones) give them a positive effective weight; null when none has one, and a pick
   * then ignores localities, as in Envoy.
   */
  static build(hostSet: HostSet, eligible: HostsPerLocality): LocalityScheduler | null {
    const edf = new EdfScheduler<LocalityEntry>();
    for (let index = 0; index < eligible.hosts.length; index++) {
      const weight = effectiveLocalityWeight(hostSet, eligible, index);
      if (weight > 0) edf.add(weight, { index, weight });
    }
    return edf.size === 0 ? null : new LocalityScheduler(edf);
  }

  /** The index of the next locality, in the priority's hostsPerLocality. */
  pick(): number {
    // The schedule is never empty (see build), so a pick always finds an entry.
    return this.edf.pickAndAdd(entryWeight)!.index;
  }
}

/**
 * Envoy's effective locality weight: `weight * min(1, factor * eligible / hosts)`, the factor the
 * host set's overprovisioning factor (1.4 by default), the hosts counted without those kept out
 * of the arithmetic (ignore_new_hosts_until_first_hc).
 */
export function effectiveLocalityWeight(hostSet: HostSet, eligible: HostsPerLocality, index: number): number {
  const hosts = hostSet.hostsPerLocality.hosts[index].length - hostSet.excludedHostsPerLocality.hosts[index].length;
  if (hosts === 0) return 0;
  const availability = eligible.hosts[index].length / hosts;
  return hostSet.localityWeights[index] * Math.min(1, (hostSet.overprovisioningFactor / 100) * availability);
}

function entryWeight(entry: LocalityEntry): number {
  return entry.weight;
}
