// Membership as the supervisor's cluster manager makes it, for tests that build a worker's
// clusters without a supervisor: the same pure diff, slots from the test's stats store.

import { type ClusterConfig, DEFAULT_OVERPROVISIONING_FACTOR, type LocalityLbEndpoints } from '../../src/config/model';
import type { HostTable } from '../../src/stats/host_table';
import { applyUpdate, membershipPolicy, type ClusterSnapshot, diffMembership, discoveredHosts, hostKey, type MembershipPolicy, type MembershipUpdate } from '../../src/upstream/shared/membership';

/** ClusterLoadAssignment.Policy unset, as workers get it: Envoy's defaults. */
export const DEFAULT_POLICY: MembershipPolicy = { overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR, dropOverload: null };

function empty(cluster: string): ClusterSnapshot {
  return { cluster, version: 0, hosts: [], policy: DEFAULT_POLICY };
}

/** Version 1 of every cluster: its load assignment. */
export function staticSnapshots(configs: readonly ClusterConfig[], hosts: HostTable): ClusterSnapshot[] {
  return configs.map((c) => {
    const update = diffMembership(empty(c.name), discoveredHosts(c.loadAssignment.endpoints), c.loadAssignment.policy, hosts);
    return update === null ? { cluster: c.name, version: 1, hosts: [], policy: membershipPolicy(c.loadAssignment.policy) } : applyUpdate(update);
  });
}

/** Successive memberships of one cluster, as updates. */
export class MembershipDriver {
  private current: ClusterSnapshot;

  constructor(
    cluster: string,
    private readonly hosts: HostTable,
  ) {
    this.current = empty(cluster);
  }

  get snapshot(): ClusterSnapshot {
    return this.current;
  }

  /** The update that sets (or clears) health `bits` on the host at `address` (`ip:port`), as a health source's verdict. */
  setHealthFlags(address: string, bits: number, set: boolean): MembershipUpdate {
    const hosts = this.current.hosts.map((h) =>
      hostKey(h) === address ? { ...h, healthFlags: set ? h.healthFlags | bits : h.healthFlags & ~bits } : h,
    );
    const update: MembershipUpdate = {
      cluster: this.current.cluster,
      version: this.current.version + 1,
      baseVersion: this.current.version,
      hosts,
      added: [],
      changed: [address],
      removed: [],
      policy: this.current.policy,
    };
    this.current = applyUpdate(update);
    return update;
  }

  /** The update to `endpoints`; null when nothing changed. */
  next(endpoints: readonly LocalityLbEndpoints[]): MembershipUpdate | null {
    const update = diffMembership(this.current, discoveredHosts(endpoints), this.current.policy, this.hosts);
    if (update !== null) this.current = applyUpdate(update);
    return update;
  }
}
