// A cluster's membership as the supervisor owns it and every worker mirrors it: the hosts with
// what load balancing and GET /clusters need, under a version that grows with each change.
// Plain data (it crosses the IPC channel) and pure functions: the diff that turns a discovery
// result into an update, and the update applied to a snapshot.

import type { EndpointHealthStatus, LoadAssignmentPolicy, LocalityLbEndpoints, Locality, SocketAddress } from '../../config/model';
import type { HostSlot } from '../../stats/stats';
import { addressString } from '../../network/socket_address';
import { edsHealthFlag, EDS_FLAGS, HealthFlag } from './health_flags';

export interface MemberHost {
  /** The resolved address: an IP and a port. */
  readonly address: SocketAddress;
  /**
   * The host's identity when it is not its address: LOGICAL_DNS's one host keeps it (and its
   * connections) while its address follows DNS. Unset: the address is the identity.
   */
  readonly logicalKey?: string;
  readonly hostname: string;
  /** Envoy's host weight: max(1, load_balancing_weight). */
  readonly weight: number;
  readonly priority: number;
  readonly locality: Locality;
  /** The load_balancing_weight of the host's locality; 0 when unset. */
  readonly localityWeight: number;
  /** filter_metadata of the endpoint. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** HealthFlag bits; each source of health (EDS, active checks, outlier detection) owns its own. */
  readonly healthFlags: number;
  /** Its per-host statistics in the stats region, the same for every process. */
  readonly slot: HostSlot;
}

/**
 * The part of a load assignment's policy workers use. endpoint_stale_after is left out: only the
 * supervisor's EDS cluster reads it, and a change to it alone must not reach every worker.
 */
export type MembershipPolicy = Pick<LoadAssignmentPolicy, 'overprovisioningFactor' | 'dropOverload'>;

export function membershipPolicy(policy: MembershipPolicy): MembershipPolicy {
  return { overprovisioningFactor: policy.overprovisioningFactor, dropOverload: policy.dropOverload };
}

export interface ClusterSnapshot {
  readonly cluster: string;
  /** 1 for the first membership, then one more per update. */
  readonly version: number;
  /** In discovery order, which is the order of /clusters and of the balancers' host lists. */
  readonly hosts: readonly MemberHost[];
  /** The load assignment's policy: the static one, or the last EDS assignment's. */
  readonly policy: MembershipPolicy;
}

/** A change of one cluster's membership, as the supervisor sends it to every worker. */
export interface MembershipUpdate {
  readonly cluster: string;
  readonly version: number;
  /** The version the change applies to; a worker at another version cannot apply it. */
  readonly baseVersion: number;
  /** Every host after the change, in order (hosts that stay are matched by address). */
  readonly hosts: readonly MemberHost[];
  /** Keys (hostKey) of the hosts that joined, changed and left. */
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
  /** The policy after the change. */
  readonly policy: MembershipPolicy;
}

/** A host as discovery describes it, before the owner gives it a slot and keeps its other health bits. */
export type DiscoveredHost = Omit<MemberHost, 'slot'>;

/** What identifies a host across updates: its logical key, else its address (`asString()`). */
export function hostKey(host: { readonly address: SocketAddress; readonly logicalKey?: string }): string {
  return host.logicalKey ?? addressString(host.address);
}

/** The hosts of an EDS-shaped assignment (a static load_assignment, a DNS answer), in order. */
export function discoveredHosts(endpoints: readonly LocalityLbEndpoints[]): DiscoveredHost[] {
  return endpoints.flatMap((group) =>
    group.lbEndpoints.map((endpoint) => ({
      address: endpoint.address,
      hostname: endpoint.hostname,
      weight: Math.max(1, endpoint.loadBalancingWeight),
      priority: group.priority,
      locality: group.locality,
      localityWeight: group.loadBalancingWeight,
      metadata: endpoint.metadata,
      healthFlags: edsHealthFlag(endpoint.healthStatus as EndpointHealthStatus),
    })),
  );
}

/**
 * A host made for a destination (ORIGINAL_DST): weight 1, no locality or metadata, named
 * `<cluster><address>` as Envoy names it. The supervisor's member and a worker's host made
 * before it (Cluster.hostFor) alike.
 */
export function destinationHost(cluster: string, address: SocketAddress): DiscoveredHost {
  return {
    address: { address: address.address, port: address.port },
    hostname: cluster + addressString(address),
    weight: 1,
    priority: 0,
    locality: { region: '', zone: '', subZone: '' },
    localityWeight: 0,
    metadata: {},
    healthFlags: 0,
  };
}

export interface SlotSource {
  allocate(): HostSlot;
  free(slot: HostSlot): void;
}

/**
 * The update that takes `current` to `discovered`, or null when nothing visible changed.
 * Hosts that stay keep their slot and the health bits other sources own; a joining host gets
 * a slot from `slots` and the `newHostFlags` of the health sources (a health-checked host starts
 * failed until its first check), and a leaving one gives its slot back. With
 * `keepHealthyOnRemoval` (active health checking without ignore_health_on_host_removal), a
 * leaving host that is not failed stays, after the others, flagged PENDING_DYNAMIC_REMOVAL
 * until it fails its check (removeFailedPending) or comes back.
 */
export function diffMembership(
  current: ClusterSnapshot,
  discovered: readonly DiscoveredHost[],
  policy: MembershipPolicy,
  slots: SlotSource,
  newHostFlags = 0,
  keepHealthyOnRemoval = false,
): MembershipUpdate | null {
  const before = new Map(current.hosts.map((h) => [hostKey(h), h]));
  // The same address twice (two DNS names answering one IP) is one host, as in Envoy.
  const next = new Map<string, DiscoveredHost>();
  for (const d of discovered) {
    const key = hostKey(d);
    if (!next.has(key)) next.set(key, d);
  }
  const added: string[] = [];
  const changed: string[] = [];
  const kept = new Map<string, MemberHost>();
  for (const [key, d] of next) {
    const old = before.get(key);
    if (old === undefined) {
      added.push(key);
      continue;
    }
    // A host back in discovery is no longer pending removal.
    const host = memberHost(d, (old.healthFlags & ~(EDS_FLAGS | HealthFlag.PENDING_DYNAMIC_REMOVAL)) | d.healthFlags, old.slot);
    if (!sameHost(old, host)) changed.push(key);
    kept.set(key, host);
  }
  const removed: string[] = [];
  const pendingRemoval: MemberHost[] = [];
  for (const [key, host] of before) {
    if (next.has(key)) continue;
    if (!keepHealthyOnRemoval || (host.healthFlags & (HealthFlag.FAILED_ACTIVE_HC | HealthFlag.FAILED_EDS_HEALTH)) !== 0) {
      removed.push(key);
    } else if ((host.healthFlags & HealthFlag.PENDING_DYNAMIC_REMOVAL) !== 0) {
      pendingRemoval.push(host);
    } else {
      pendingRemoval.push({ ...host, healthFlags: host.healthFlags | HealthFlag.PENDING_DYNAMIC_REMOVAL });
      changed.push(key);
    }
  }
  const order = [...next.keys(), ...pendingRemoval.map(hostKey)];
  const reordered = added.length === 0 && removed.length === 0 && order.some((key, i) => key !== hostKey(current.hosts[i]!));
  const unchanged = added.length === 0 && changed.length === 0 && removed.length === 0 && !reordered;
  if (unchanged && samePolicy(current.policy, policy)) return null;
  // Slots go back before new ones are taken, so that churn reuses them.
  for (const key of removed) slots.free(before.get(key)!.slot);
  const hosts = [...next].map(([key, d]) => kept.get(key) ?? memberHost(d, d.healthFlags | newHostFlags, slots.allocate()));
  hosts.push(...pendingRemoval);
  return { cluster: current.cluster, version: current.version + 1, baseVersion: current.version, hosts, added, changed, removed, policy: membershipPolicy(policy) };
}

/**
 * `d` as a member. Written out: V8 takes a slow path to add a property to a spread copy
 * (`{ ...d, slot }`), 2.5 us a host, most of the diff of 10,000 clusters' first hosts.
 */
function memberHost(d: DiscoveredHost, healthFlags: number, slot: HostSlot): MemberHost {
  const host: MemberHost = {
    address: d.address,
    hostname: d.hostname,
    weight: d.weight,
    priority: d.priority,
    locality: d.locality,
    localityWeight: d.localityWeight,
    metadata: d.metadata,
    healthFlags,
    slot,
  };
  return d.logicalKey === undefined ? host : { ...host, logicalKey: d.logicalKey };
}

/** A cluster's membership before discovery's first result: no hosts, its load assignment's policy. */
export function emptySnapshot(config: { readonly name: string; readonly loadAssignment: { readonly policy: LoadAssignmentPolicy } }): ClusterSnapshot {
  return { cluster: config.name, version: 0, hosts: [], policy: membershipPolicy(config.loadAssignment.policy) };
}

export function applyUpdate(update: MembershipUpdate): ClusterSnapshot {
  return { cluster: update.cluster, version: update.version, hosts: update.hosts, policy: update.policy };
}

function samePolicy(a: MembershipPolicy, b: MembershipPolicy): boolean {
  return (
    a.overprovisioningFactor === b.overprovisioningFactor &&
    a.dropOverload?.numerator === b.dropOverload?.numerator &&
    a.dropOverload?.denominator === b.dropOverload?.denominator
  );
}

function sameHost(a: MemberHost, b: MemberHost): boolean {
  return (
    a.address.address === b.address.address &&
    a.address.port === b.address.port &&
    a.hostname === b.hostname &&
    a.weight === b.weight &&
    a.priority === b.priority &&
    a.localityWeight === b.localityWeight &&
    a.healthFlags === b.healthFlags &&
    a.locality.region === b.locality.region &&
    a.locality.zone === b.locality.zone &&
    a.locality.subZone === b.locality.subZone &&
    // Metadata is small and plain JSON; structural equality through its text is enough.
    JSON.stringify(a.metadata) === JSON.stringify(b.metadata)
  );
}
