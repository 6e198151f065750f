// STRICT_DNS and LOGICAL_DNS: the supervisor resolves the configured names (dns/)
// and each answer becomes the cluster's membership. LOGICAL_DNS's single host keeps one
// identity while its address follows the first answer, so that its connections survive.

import type { ClusterConfig } from '../../config/model';
import type { ClusterDiscovery, ClusterType, DiscoveryContext } from './cluster_discovery';
import type { DnsClusterSettings, DnsDiscovery } from './dns/dns_cluster_settings';
import { type DiscoveredHost, discoveredHosts } from '../shared/membership';
import { mathRandom } from '../../common/random';

function dnsSettings(config: ClusterConfig, type: DnsClusterSettings['type']): DnsClusterSettings {
  return {
    clusterName: config.name,
    type,
    endpoints: config.loadAssignment.endpoints,
    dnsRefreshRateMs: config.dnsRefreshRateMs,
    dnsFailureRefreshRate: config.dnsFailureRefreshRate,
    respectDnsTtl: config.respectDnsTtl,
    dnsLookupFamily: config.dnsLookupFamily,
    dnsResolvers: config.dnsResolvers,
    useTcpForDnsLookups: config.useTcpForDnsLookups,
  };
}

class DnsClusterDiscovery implements ClusterDiscovery {
  private discovery: DnsDiscovery | null = null;
  private settled: Promise<void> | null = null;

  constructor(
    private readonly settings: DnsClusterSettings,
    private readonly context: DiscoveryContext,
  ) {}

  get initialized(): Promise<void> {
    // Asked before start() only by mistake: nothing is resolving, so nothing is awaited.
    return this.settled ?? Promise.resolve();
  }

  start(onHosts: (hosts: readonly DiscoveredHost[]) => void): void {
    const { clock, stats } = this.context;
    const logicalKey = this.settings.type === 'LOGICAL_DNS' ? logicalHostKey(this.settings) : undefined;
    // The resolver (its DNS client and wire format, 20 modules) loads with the first DNS cluster.
    const { createDnsDiscovery } = require('./dns/dns_discovery') as typeof import('./dns/dns_discovery');
    this.discovery = createDnsDiscovery(
      this.settings,
      {
        clock,
        random: mathRandom,
        stats: {
          update_attempt: stats.counter('update_attempt'),
          update_success: stats.counter('update_success'),
          update_failure: stats.counter('update_failure'),
          update_no_rebuild: stats.counter('update_no_rebuild'),
        },
      },
      (endpoints) => {
        const hosts = discoveredHosts(endpoints);
        onHosts(logicalKey === undefined ? hosts : hosts.map((h) => ({ ...h, logicalKey })));
      },
    );
    this.settled = this.discovery.initialized;
  }

  close(): void {
    this.discovery?.close();
  }
}

/** The one logical host's identity: the configured name and port. */
function logicalHostKey(settings: DnsClusterSettings): string {
  const endpoint = settings.endpoints[0]?.lbEndpoints[0];
  return `logical:${endpoint?.address.address ?? ''}:${endpoint?.address.port ?? 0}`;
}

export const STRICT_DNS_CLUSTER: ClusterType = {
  name: 'STRICT_DNS',
  create: (config, context) => new DnsClusterDiscovery(dnsSettings(config, 'STRICT_DNS'), context),
};

export const LOGICAL_DNS_CLUSTER: ClusterType = {
  name: 'LOGICAL_DNS',
  create: (config, context) => new DnsClusterDiscovery(dnsSettings(config, 'LOGICAL_DNS'), context),
};
