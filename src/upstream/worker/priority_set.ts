// Hosts grouped by priority, each group split by health and by locality the way the load
// balancers consume them (Envoy's PrioritySet / HostSet / HostsPerLocality). Rebuilt whole on
// every membership or health change: changes are rare, picks are constant.

import { DEFAULT_OVERPROVISIONING_FACTOR, type Locality } from '../../config/model';
import { EXCLUDING_FLAGS } from '../shared/health_flags';
import type { Host } from './host';

/**
 * Hosts by locality (Envoy's HostsPerLocality): localities in (region, zone, sub_zone) order,
 * except that the local locality, when it has hosts, comes first.
 */
export class HostsPerLocality {
  constructor(
    readonly localities: readonly Locality[],
    /** Parallel to localities. */
    readonly hosts: readonly (readonly Host[])[],
    /** localities[0] is the local locality. */
    readonly hasLocalLocality: boolean,
  ) {}

  /** The same localities, each keeping the hosts `keep` accepts (maybe none). */
  filter(keep: (host: Host) => boolean): HostsPerLocality {
    return new HostsPerLocality(
      this.localities,
      this.hosts.map((hosts) => hosts.filter(keep)),
      this.hasLocalLocality,
    );
  }
}

export class HostSet {
  readonly healthyHosts: readonly Host[];
  readonly degradedHosts: readonly Host[];
  readonly excludedHosts: readonly Host[];
  readonly hostsPerLocality: HostsPerLocality;
  readonly healthyHostsPerLocality: HostsPerLocality;
  readonly degradedHostsPerLocality: HostsPerLocality;
  readonly excludedHostsPerLocality: HostsPerLocality;
  /**
   * Parallel to hostsPerLocality.localities: each locality's load_balancing_weight (0 when
   * unset). Read by locality-weighted balancing only.
   */
  readonly localityWeights: readonly number[];

  /** Index of each host's locality in hostsPerLocality; made on first use (by subset). */
  private localityIndexes: Map<Host, number> | null = null;

  /**
   * `overprovisioningFactor`: in percent, the load assignment's.
   * `layout`: the localities and their weights, when not those of the hosts themselves (subset).
   */
  constructor(
    readonly priority: number,
    readonly hosts: readonly Host[],
    readonly overprovisioningFactor: number,
    localLocality: Locality | null = null,
    layout?: { readonly hostsPerLocality: HostsPerLocality; readonly localityWeights: readonly number[] },
  ) {
    const healthy = (h: Host) => h.health() === 'healthy';
    const degraded = (h: Host) => h.health() === 'degraded';
    const excluded = (h: Host) => (h.healthFlags & EXCLUDING_FLAGS) !== 0;
    this.healthyHosts = hosts.filter(healthy);
    this.degradedHosts = hosts.filter(degraded);
    this.excludedHosts = hosts.filter(excluded);
    this.hostsPerLocality = layout?.hostsPerLocality ?? groupByLocality(hosts, localLocality);
    this.healthyHostsPerLocality = this.hostsPerLocality.filter(healthy);
    this.degradedHostsPerLocality = this.hostsPerLocality.filter(degraded);
    this.excludedHostsPerLocality = this.hostsPerLocality.filter(excluded);
    this.localityWeights = layout?.localityWeights ?? this.hostsPerLocality.hosts.map((group) => group[0].localityWeight);
  }

  /**
   * The set of `members` (hosts of this set, in its order) as a subset load balancer sees it
   * (Envoy's HostSubsetImpl): every locality of this set stays, in place, even when the subset
   * leaves it empty. `localityWeights` gives the subset's weights, parallel to those localities.
   */
  subset(members: readonly Host[], localityWeights: (kept: HostsPerLocality) => readonly number[]): HostSet {
    const indexes = (this.localityIndexes ??= new Map(this.hostsPerLocality.hosts.flatMap((group, i) => group.map((h) => [h, i] as const))));
    const groups: Host[][] = this.hostsPerLocality.localities.map(() => []);
    for (const member of members) groups[indexes.get(member)!].push(member);
    const hostsPerLocality = new HostsPerLocality(this.hostsPerLocality.localities, groups, this.hostsPerLocality.hasLocalLocality);
    return new HostSet(this.priority, members, this.overprovisioningFactor, null, { hostsPerLocality, localityWeights: localityWeights(hostsPerLocality) });
  }
}

export class PrioritySet {
  /** Until the first update, one empty priority (its factor weighs no host). */
  private sets: readonly HostSet[] = [new HostSet(0, [], DEFAULT_OVERPROVISIONING_FACTOR)];
  private readonly updateListeners: (() => void)[] = [];

  /** `localLocality`: this proxy's own (the bootstrap node's, after --service-zone), listed first when present. */
  constructor(private readonly localLocality: Locality | null = null) {}

  /** Index = priority; priorities between 0 and the highest one used are present, maybe empty. */
  get hostSetsPerPriority(): readonly HostSet[] {
    return this.sets;
  }

  /**
   * Replaces the membership with `hosts`, grouped by their priority, in the given order; every
   * priority takes the load assignment's `overprovisioningFactor`, as in Envoy.
   */
  update(hosts: readonly Host[], overprovisioningFactor: number): void {
    const highest = hosts.reduce((max, h) => Math.max(max, h.priority), 0);
    const groups: Host[][] = Array.from({ length: highest + 1 }, () => []);
    for (const host of hosts) groups[host.priority].push(host);
    this.sets = groups.map((group, priority) => new HostSet(priority, group, overprovisioningFactor, this.localLocality));
    for (const listener of this.updateListeners) listener();
  }

  /**
   * Calls `listener` after every update: the balancers of other clusters follow the local
   * cluster's membership (zone-aware routing) and their children's (aggregate) this way.
   * @returns the listener's removal, for a follower that goes before this set (a CDS cluster)
   */
  onUpdate(listener: () => void): () => void {
    this.updateListeners.push(listener);
    return () => {
      const i = this.updateListeners.indexOf(listener);
      if (i >= 0) this.updateListeners.splice(i, 1);
    };
  }

  /** Replaces the membership with host sets made from another priority set's (HostSet.subset), one per priority. */
  updateSets(sets: readonly HostSet[]): void {
    this.sets = sets;
  }
}

function localityKey(locality: Locality): string {
  return `${locality.region}\0${locality.zone}\0${locality.subZone}`;
}

function compareLocalities(a: Locality, b: Locality): number {
  return compare(a.region, b.region) || compare(a.zone, b.zone) || compare(a.subZone, b.subZone);
}

/** Byte order, as std::string's operator< (localeCompare would not be). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function groupByLocality(hosts: readonly Host[], localLocality: Locality | null): HostsPerLocality {
  const groups = new Map<string, Host[]>();
  for (const host of hosts) {
    const key = localityKey(host.locality);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [host]);
    else group.push(host);
  }
  const ordered = [...groups.values()].sort((a, b) => compareLocalities(a[0].locality, b[0].locality));
  const localKey = localLocality === null ? null : localityKey(localLocality);
  const local = ordered.findIndex((group) => localityKey(group[0].locality) === localKey);
  if (local > 0) ordered.unshift(...ordered.splice(local, 1));
  return new HostsPerLocality(
    ordered.map((group) => group[0].locality),
    ordered,
    local >= 0,
  );
}
