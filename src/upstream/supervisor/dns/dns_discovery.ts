// The entry point for a DNS cluster: the discovery its type calls for, resolving through a client
// for the cluster's dns_resolvers (else the system's) over UDP or, if asked, TCP.

import { DnsClient } from '../../../network/dns/dns_client';
import type { DnsClusterSettings, DnsDiscovery, DnsDiscoveryDeps, DnsUpdateCallback } from './dns_cluster_settings';
import { LogicalDnsDiscovery } from './logical_dns_discovery';
import { StrictDnsDiscovery } from './strict_dns_discovery';

/** Starts resolving at once; the first onUpdate comes after the first answer with addresses. */
export function createDnsDiscovery(settings: DnsClusterSettings, deps: DnsDiscoveryDeps, onUpdate: DnsUpdateCallback): DnsDiscovery {
  const resolver = new DnsClient({ servers: settings.dnsResolvers, useTcp: settings.useTcpForDnsLookups, clock: deps.clock });
  return settings.type === 'STRICT_DNS'
    ? new StrictDnsDiscovery(settings, deps, resolver, onUpdate)
    : new LogicalDnsDiscovery(settings, deps, resolver, onUpdate);
}
