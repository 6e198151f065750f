// One upstream endpoint as a worker sees it: where it is, how much traffic it should get and
// whether it may get any. Made from the supervisor's MemberHost; a host that stays in the
// membership keeps its object (and with it its connection pool) as its description changes.

import type { Locality } from '../../config/model';
import type { HostSlot } from '../../stats/stats';
import { addressString } from '../../network/socket_address';
import { isCanaryHost } from '../shared/canary';
import { type HostHealth, hostHealth } from '../shared/health_flags';
import type { MemberHost } from '../shared/membership';
import { NO_OUTLIER_MONITOR, type OutlierMonitor } from './outlier/host_monitor';

export class Host {
  /** Envoy's `asString()`: `10.0.0.1:80`, `[::1]:80`. Follows the address of a logical host. */
  addressString: string;
  hostname: string;
  /** Envoy's host weight: `max(1, load_balancing_weight)`. */
  weight: number;
  priority: number;
  locality: Locality;
  localityWeight: number;
  metadata: Readonly<Record<string, unknown>>;
  /** From the metadata: its responses are counted under `canary.` too. */
  canary: boolean;
  healthFlags: number;
  slot: HostSlot | null;
  /** Where requests' outcomes go for outlier detection; set by the cluster that has it. */
  outlier: OutlierMonitor = NO_OUTLIER_MONITOR;

  constructor(
    /** Where new connections go; a LOGICAL_DNS host's changes, its open connections stay. */
    public ip: string,
    public port: number,
    init: {
      hostname: string;
      weight: number;
      priority: number;
      locality: Locality;
      healthFlags: number;
      localityWeight?: number;
      metadata?: Readonly<Record<string, unknown>>;
      slot?: HostSlot | null;
    },
  ) {
    this.addressString = addressString({ address: ip, port });
    this.hostname = init.hostname;
    this.weight = Math.max(1, init.weight);
    this.priority = init.priority;
    this.locality = init.locality;
    this.localityWeight = init.localityWeight ?? 0;
    this.metadata = init.metadata ?? {};
    this.canary = isCanaryHost(this.metadata);
    this.healthFlags = init.healthFlags;
    this.slot = init.slot ?? null;
  }

  static fromMember(member: MemberHost): Host {
    return new Host(member.address.address, member.address.port, member);
  }

  /** Takes the newer description of the same host (same address, or same logical key). */
  updateFrom(member: MemberHost): void {
    this.ip = member.address.address;
    this.port = member.address.port;
    this.addressString = addressString(member.address);
    this.hostname = member.hostname;
    this.weight = Math.max(1, member.weight);
    this.priority = member.priority;
    this.locality = member.locality;
    this.localityWeight = member.localityWeight;
    this.metadata = member.metadata;
    this.canary = isCanaryHost(member.metadata);
    this.healthFlags = member.healthFlags;
    this.slot = member.slot;
  }

  health(): HostHealth {
    return hostHealth(this.healthFlags);
  }
}
