// LOGICAL_DNS: one configured name, one logical host whose address is the first one the name
// resolves to. The host stays the same as its address changes, so connections the integrator
// keeps per logical host are not torn down by a DNS change. An empty answer is a failure here:
// the host keeps its last address rather than the cluster falling to no host.

import type { LbEndpoint, LocalityLbEndpoints } from '../../../config/model';
import type { DnsResolver } from '../../../network/dns/dns_client';
import { type DnsClusterSettings, type DnsDiscovery, type DnsDiscoveryDeps, DnsSettingsError, type DnsUpdateCallback } from './dns_cluster_settings';
import { type BackOffStrategy, failureBackOff, successRefreshMs } from './refresh_delays';
import { RefreshTimer } from './refresh_timer';
import { resolvedEndpoint } from './resolved_endpoint';

export class LogicalDnsDiscovery implements DnsDiscovery {
  readonly initialized: Promise<void>;
  private readonly group: LocalityLbEndpoints;
  private readonly endpoint: LbEndpoint;
  private readonly backOff: BackOffStrategy;
  private readonly timer: RefreshTimer;
  private currentAddress: string | null = null;

  constructor(
    private readonly settings: DnsClusterSettings,
    private readonly deps: DnsDiscoveryDeps,
    private readonly resolver: DnsResolver,
    private readonly onUpdate: DnsUpdateCallback,
  ) {
    const group = settings.endpoints[0];
    const endpoint = group?.lbEndpoints[0];
    if (settings.endpoints.length !== 1 || group?.lbEndpoints.length !== 1 || endpoint === undefined) {
      throw new DnsSettingsError(settings.clusterName, 'LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint');
    }
    this.group = group;
    this.endpoint = endpoint;
    this.backOff = failureBackOff(settings, deps.random);
    let resolvedOnce: () => void = () => {};
    this.initialized = new Promise<void>((resolve) => (resolvedOnce = resolve));
    this.timer = new RefreshTimer(deps.clock, async (signal) => {
      const delayMs = await this.resolve(signal);
      resolvedOnce();
      return delayMs;
    });
    this.timer.start();
  }

  close(): void {
    this.timer.close();
  }

  private async resolve(signal: AbortSignal): Promise<number> {
    const { stats } = this.deps;
    stats.update_attempt.inc();
    const first = await this.resolver.resolve(this.endpoint.address.address, this.settings.dnsLookupFamily, signal).then(
      (answer) => answer[0] ?? null,
      () => null,
    );
    if (signal.aborted) return 0;
    if (first === null) {
      stats.update_failure.inc();
      return this.backOff.nextBackOffMs();
    }
    stats.update_success.inc();
    if (first.address !== this.currentAddress) {
      this.currentAddress = first.address;
      // Envoy puts the logical host at priority 0 whatever the configuration says.
      this.onUpdate([{ ...this.group, priority: 0, lbEndpoints: [resolvedEndpoint(this.endpoint, first.address)] }]);
    }
    this.backOff.reset();
    return successRefreshMs(this.settings, first.ttlSeconds);
  }
}
