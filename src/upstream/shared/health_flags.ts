// A host's health as a set of flags, as in Envoy: each source of unhealthiness (EDS, active
// health checks, outlier detection) owns its own bit, so that one clearing its bit never
// hides another's verdict.

import type { EndpointHealthStatus } from '../../config/model';

/** Envoy's Host::HealthFlag bits. */
export const HealthFlag = {
  FAILED_ACTIVE_HC: 0x01,
  FAILED_OUTLIER_CHECK: 0x02,
  FAILED_EDS_HEALTH: 0x04,
  DEGRADED_ACTIVE_HC: 0x08,
  DEGRADED_EDS_HEALTH: 0x10,
  PENDING_DYNAMIC_REMOVAL: 0x20,
  PENDING_ACTIVE_HC: 0x40,
} as const;

export const UNHEALTHY_FLAGS = HealthFlag.FAILED_ACTIVE_HC | HealthFlag.FAILED_OUTLIER_CHECK | HealthFlag.FAILED_EDS_HEALTH;
export const DEGRADED_FLAGS = HealthFlag.DEGRADED_ACTIVE_HC | HealthFlag.DEGRADED_EDS_HEALTH;
/** Envoy's excludeBasedOnHealthFlag: hosts kept out of the load balancers' health arithmetic. */
export const EXCLUDING_FLAGS = HealthFlag.PENDING_ACTIVE_HC;
/** The bits a discovery result (EDS, or a static assignment's health_status) decides. */
export const EDS_FLAGS = HealthFlag.FAILED_EDS_HEALTH | HealthFlag.DEGRADED_EDS_HEALTH;

export type HostHealth = 'healthy' | 'degraded' | 'unhealthy';

/** The EDS health flag an endpoint's health_status implies. */
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

export function hostHealth(flags: number): HostHealth {
  if ((flags & UNHEALTHY_FLAGS) !== 0) return 'unhealthy';
  if ((flags & DEGRADED_FLAGS) !== 0) return 'degraded';
  return 'healthy';
}

/** Envoy's words for the flags, in its order. */
const FLAG_WORDS: readonly (readonly [number, string])[] = [
  [HealthFlag.FAILED_ACTIVE_HC, '/failed_active_hc'],
  [HealthFlag.FAILED_OUTLIER_CHECK, '/failed_outlier_check'],
  [HealthFlag.FAILED_EDS_HEALTH, '/failed_eds_health'],
  [HealthFlag.DEGRADED_ACTIVE_HC, '/degraded_active_hc'],
  [HealthFlag.DEGRADED_EDS_HEALTH, '/degraded_eds_health'],
  [HealthFlag.PENDING_DYNAMIC_REMOVAL, '/pending_dynamic_removal'],
  [HealthFlag.PENDING_ACTIVE_HC, '/pending_active_hc'],
];

/** GET /clusters' `health_flags`: `healthy`, or the words of the set flags concatenated. */
export function healthFlagsString(flags: number): string {
  const words = FLAG_WORDS.filter(([bit]) => (flags & bit) !== 0).map(([, word]) => word);
  return words.length === 0 ? 'healthy' : words.join('');
}
