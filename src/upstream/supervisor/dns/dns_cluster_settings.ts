// What DNS discovery of one cluster takes and gives: the cluster's DNS settings as plain data,
// the clock, randomness and counters it runs on, and the membership it reports.

import type { Clock } from '../../../common/clock';
import type { LocalityLbEndpoints } from '../../../config/model';
import type { DnsLookupFamily } from '../../../network/dns/dns_client';
import type { DnsServer } from '../../../network/dns/resolv_conf';
import type { Counter } from '../../../stats/stats';

export const DEFAULT_DNS_REFRESH_RATE_MS = 5000;

export interface DnsClusterSettings {
  readonly clusterName: string;
  readonly type: 'STRICT_DNS' | 'LOGICAL_DNS';
  /** As configured: each endpoint's address.address is the name to resolve. */
  readonly endpoints: readonly LocalityLbEndpoints[];
  /** dns_refresh_rate; DEFAULT_DNS_REFRESH_RATE_MS when unset. */
  readonly dnsRefreshRateMs: number;
  /** dns_failure_refresh_rate (max defaults to 10 x base); null: failures retry at the refresh rate. */
  readonly dnsFailureRefreshRate: { readonly baseMs: number; readonly maxMs: number } | null;
  readonly respectDnsTtl: boolean;
  readonly dnsLookupFamily: DnsLookupFamily;
  /** dns_resolvers; empty means the system's (resolv.conf). */
  readonly dnsResolvers: readonly DnsServer[];
  readonly useTcpForDnsLookups: boolean;
}

/** The cluster counters DNS discovery moves, with Envoy's names and meanings. */
export type DnsDiscoveryStatName = 'update_attempt' | 'update_success' | 'update_failure' | 'update_no_rebuild';

export type DnsDiscoveryStats = Readonly<Record<DnsDiscoveryStatName, Pick<Counter, 'inc'>>>;

export interface DnsDiscoveryDeps {
  /** Schedules the refreshes and times the queries. */
  readonly clock: Clock;
  /** A uniform non-negative integer per call (Envoy's random()), for the failure backoff jitter. */
  readonly random: () => number;
  readonly stats: DnsDiscoveryStats;
}

/** The cluster's whole membership, in the configured groups, with resolved addresses. */
export type DnsUpdateCallback = (endpoints: LocalityLbEndpoints[]) => void;

export interface DnsDiscovery {
  /**
   * Settles (never rejects) once every configured name has had its first resolution, whether it
   * succeeded or failed; at once when there is no name.
   */
  readonly initialized: Promise<void>;
  /** Stops the refresh timers and abandons queries in flight (their sockets close). */
  close(): void;
}

/** Settings that DNS discovery cannot run with (validation should have caught them earlier). */
export class DnsSettingsError extends Error {
  constructor(
    readonly clusterName: string,
    message: string,
  ) {
    super(`cluster ${clusterName}: ${message}`);
    this.name = 'DnsSettingsError';
  }
}
