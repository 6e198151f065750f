// One upstream endpoint as a worker sees it: where it is, how much traffic it should get and
// whether it may get any. Health is a set of flags, as in Envoy: each source of unhealthiness
// (EDS, active health checks, outlier detection) owns its own bit.

import type { EndpointHealthStatus, LbEndpoint, Locality } from '../config/model';
import { addressString } from './address';

/** Envoy's Host::HealthFlag bits that decide a host's health. */
export const HealthFlag = {
  FAILED_ACTIVE_HC: 0x01,
  FAILED_OUTLIER_CHECK: 0x02,
  FAILED_EDS_HEALTH: 0x04,
  DEGRADED_ACTIVE_HC: 0x08,
  DEGRADED_EDS_HEALTH: 0x10,
} as const;

const UNHEALTHY_FLAGS = HealthFlag.FAILED_ACTIVE_HC | HealthFlag.FAILED_OUTLIER_CHECK | HealthFlag.FAILED_EDS_HEALTH;
const DEGRADED_FLAGS = HealthFlag.DEGRADED_ACTIVE_HC | HealthFlag.DEGRADED_EDS_HEALTH;
const EDS_FLAGS = HealthFlag.FAILED_EDS_HEALTH | HealthFlag.DEGRADED_EDS_HEALTH;

export type HostHealth = 'healthy' | 'degraded' | 'unhealthy';

/** The EDS health flag an endpoint's configured health_status implies. */
export function edsHealthFlag(status: EndpointHealthStatus): number {
  switch (status) {
    case 'UNHEALTHY':
    case 'DRAINING':
    case 'TIMEOUT':
      return HealthFlag.FAILED_EDS_HEALTH;
    case 'DEGRADED':
      return HealthFlag.DEGRADED_EDS_HEALTH;
    case 'UNKNOWN':
    case 'HEALTHY':
      return 0;
  }
}

export class Host {
  /** Envoy's `asString()`: `10.0.0.1:80`, `[::1]:80`. Keys per-host stats and pools. */
  readonly addressString: string;
  hostname: string;
  /** Envoy's host weight: `max(1, load_balancing_weight)`. */
  weight: number;
  priority: number;
  locality: Locality;
  healthFlags: number;

  constructor(
    readonly ip: string,
    readonly port: number,
    init: { hostname: string; weight: number; priority: number; locality: Locality; healthFlags: number },
  ) {
    this.addressString = addressString({ address: ip, port });
    this.hostname = init.hostname;
    this.weight = Math.max(1, init.weight);
    this.priority = init.priority;
    this.locality = init.locality;
    this.healthFlags = init.healthFlags;
  }

  static fromEndpoint(endpoint: LbEndpoint, priority: number, locality: Locality): Host {
    return new Host(endpoint.address.address, endpoint.address.port, {
      hostname: endpoint.hostname,
      weight: endpoint.loadBalancingWeight,
      priority,
      locality,
      healthFlags: edsHealthFlag(endpoint.healthStatus),
    });
  }

  /** Takes a newer description of the same address; health bits other than EDS's are kept. */
  updateFrom(endpoint: LbEndpoint, priority: number, locality: Locality): void {
    this.hostname = endpoint.hostname;
    this.weight = Math.max(1, endpoint.loadBalancingWeight);
    this.priority = priority;
    this.locality = locality;
    this.healthFlags = (this.healthFlags & ~EDS_FLAGS) | edsHealthFlag(endpoint.healthStatus);
  }

  health(): HostHealth {
    if ((this.healthFlags & UNHEALTHY_FLAGS) !== 0) return 'unhealthy';
    if ((this.healthFlags & DEGRADED_FLAGS) !== 0) return 'degraded';
    return 'healthy';
  }
}
