// ORIGINAL_DST in the supervisor (Envoy's OriginalDstCluster): the hosts are the destinations
// the workers' balancers picked (worker/lb/original_dst_lb.ts), one per address, made when a
// worker reports one first. Every cleanup_interval the hosts no pick used since the previous sweep
// leave; their open connections stay until they end, as the workers' pools drain.

import * as net from 'node:net';
import type { ClusterConfig, SocketAddress } from '../../config/model';
import type { Clock, IntervalHandle } from '../../common/clock';
import { addressString } from '../../network/socket_address';
import type { ClusterDiscovery, ClusterType, DiscoveryContext } from './cluster_discovery';
import { destinationHost, type DiscoveredHost } from '../shared/membership';

interface PickedHost {
  readonly host: DiscoveredHost;
  /** Envoy's `used` mark: set by each pick, cleared by each sweep; a sweep removes an unmarked host. */
  used: boolean;
}

export class OriginalDstDiscovery implements ClusterDiscovery {
  // No discovery to wait for: the cluster starts empty, as Envoy's does.
  readonly initialized = Promise.resolve();
  private readonly hosts = new Map<string, PickedHost>();
  private onHosts: ((hosts: readonly DiscoveredHost[]) => void) | null = null;
  private sweeper: IntervalHandle | null = null;

  constructor(
    private readonly config: Pick<ClusterConfig, 'name' | 'cleanupIntervalMs'>,
    private readonly clock: Clock,
  ) {}

  start(onHosts: (hosts: readonly DiscoveredHost[]) => void): void {
    this.onHosts = onHosts;
    onHosts([]);
    this.sweeper = this.clock.setInterval(() => this.cleanup(), this.config.cleanupIntervalMs);
  }

  /**
   * Destinations the workers' balancers picked since their last report: each is marked used,
   * and one not yet a host joins (a new host counts as used, so it survives the next sweep).
   * Anything not an IP address and port is left out (the workers send only those).
   */
  hostsPicked(addresses: readonly SocketAddress[]): void {
    if (this.onHosts === null) return;
    let added = false;
    for (const address of addresses) {
      if (net.isIP(address.address) === 0 || !Number.isInteger(address.port) || address.port < 0 || address.port > 65535) continue;
      const key = addressString(address);
      const known = this.hosts.get(key);
      if (known !== undefined) {
        known.used = true;
        continue;
      }
      this.hosts.set(key, { host: destinationHost(this.config.name, address), used: true });
      added = true;
    }
    if (added) this.publish();
  }

  /** Envoy's cleanup(): hosts unused since the previous sweep leave; the others' marks clear. */
  private cleanup(): void {
    let removed = false;
    for (const [key, picked] of this.hosts) {
      if (picked.used) {
        picked.used = false;
      } else {
        this.hosts.delete(key);
        removed = true;
      }
    }
    if (removed) this.publish();
  }

  private publish(): void {
    this.onHosts?.([...this.hosts.values()].map((picked) => picked.host));
  }

  close(): void {
    if (this.sweeper !== null) this.clock.clearInterval(this.sweeper);
    this.sweeper = null;
    this.onHosts = null;
  }
}

export const ORIGINAL_DST_CLUSTER: ClusterType = {
  name: 'ORIGINAL_DST',
  create: (config: ClusterConfig, context: DiscoveryContext) => new OriginalDstDiscovery(config, context.clock),
};
