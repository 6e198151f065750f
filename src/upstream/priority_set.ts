// Hosts grouped by priority, each group split by health the way the load balancers consume
// them (Envoy's PrioritySet / HostSet). Rebuilt whole on every membership or health change:
// changes are rare, picks are constant.

import { HealthFlag } from './health_flags';
import type { Host } from './host';

/** Envoy's excludeBasedOnHealthFlag: hosts kept out of the load balancers' health arithmetic. */
const EXCLUDING_FLAGS = HealthFlag.PENDING_ACTIVE_HC;

export class HostSet {
  readonly healthyHosts: readonly Host[];
  readonly degradedHosts: readonly Host[];
  readonly excludedHosts: readonly Host[];

  constructor(
    readonly priority: number,
    readonly hosts: readonly Host[],
  ) {
    this.healthyHosts = hosts.filter((h) => h.health() === 'healthy');
    this.degradedHosts = hosts.filter((h) => h.health() === 'degraded');
    this.excludedHosts = hosts.filter((h) => (h.healthFlags & EXCLUDING_FLAGS) !== 0);
  }
}

export class PrioritySet {
  private sets: readonly HostSet[] = [new HostSet(0, [])];

  /** Index = priority; priorities between 0 and the highest one used are present, maybe empty. */
  get hostSetsPerPriority(): readonly HostSet[] {
    return this.sets;
  }

  /** Replaces the membership with `hosts`, grouped by their priority, in the given order. */
  update(hosts: readonly Host[]): void {
    const highest = hosts.reduce((max, h) => Math.max(max, h.priority), 0);
    const groups: Host[][] = Array.from({ length: highest + 1 }, () => []);
    for (const host of hosts) groups[host.priority].push(host);
    this.sets = groups.map((group, priority) => new HostSet(priority, group));
  }
}
