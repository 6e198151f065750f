// STRICT_DNS: every configured endpoint name is resolved on its own timer and every address it
// resolves to is a host. A name's hosts are compared by address with its previous ones: the same
// set (in any order) is no change (update_no_rebuild), anything else reports the membership.
// A resolver error or an answer with no address (NXDOMAIN, no record of the family) is a failure
// that keeps the name's previous hosts, as c-ares reports them to Envoy. One failure backoff is
// shared by all the names.

import type { LbEndpoint, LocalityLbEndpoints } from '../../../config/model';
import type { DnsResolver } from '../../../network/dns/dns_client';
import type { DnsClusterSettings, DnsDiscovery, DnsDiscoveryDeps, DnsUpdateCallback } from './dns_cluster_settings';
import { type BackOffStrategy, failureBackOff, successRefreshMs } from './refresh_delays';
import { RefreshTimer } from './refresh_timer';
import { resolvedEndpoint } from './resolved_endpoint';

interface Target {
  readonly group: LocalityLbEndpoints;
  readonly endpoint: LbEndpoint;
  hosts: readonly LbEndpoint[];
  readonly timer: RefreshTimer;
}

export class StrictDnsDiscovery implements DnsDiscovery {
  readonly initialized: Promise<void>;
  private readonly targets: Target[] = [];
  private readonly backOff: BackOffStrategy;

  constructor(
    private readonly settings: DnsClusterSettings,
    private readonly deps: DnsDiscoveryDeps,
    private readonly resolver: DnsResolver,
    private readonly onUpdate: DnsUpdateCallback,
  ) {
    this.backOff = failureBackOff(settings, deps.random);
    const firstResolutions: Promise<void>[] = [];
    for (const group of settings.endpoints) {
      for (const endpoint of group.lbEndpoints) {
        let resolvedOnce: () => void = () => {};
        firstResolutions.push(new Promise<void>((resolve) => (resolvedOnce = resolve)));
        const target: Target = {
          group,
          endpoint,
          hosts: [],
          timer: new RefreshTimer(deps.clock, async (signal) => {
            const delayMs = await this.resolveTarget(target, signal);
            resolvedOnce();
            return delayMs;
          }),
        };
        this.targets.push(target);
      }
    }
    this.initialized = Promise.all(firstResolutions).then(() => {});
    for (const target of this.targets) target.timer.start();
  }

  close(): void {
    for (const target of this.targets) target.timer.close();
  }

  private async resolveTarget(target: Target, signal: AbortSignal): Promise<number> {
    const { stats } = this.deps;
    stats.update_attempt.inc();
    let answer;
    try {
      answer = await this.resolver.resolve(target.endpoint.address.address, this.settings.dnsLookupFamily, signal);
    } catch {
      if (signal.aborted) return 0;
      stats.update_failure.inc();
      return this.backOff.nextBackOffMs();
    }
    if (signal.aborted) return 0;
    if (answer.length === 0) {
      stats.update_failure.inc();
      return this.backOff.nextBackOffMs();
    }
    stats.update_success.inc();
    const addresses = [...new Set(answer.map((resolved) => resolved.address))];
    const previous = new Set(target.hosts.map((host) => host.address.address));
    if (addresses.length === previous.size && addresses.every((address) => previous.has(address))) {
      stats.update_no_rebuild.inc();
    } else {
      target.hosts = addresses.map((address) => resolvedEndpoint(target.endpoint, address));
      this.onUpdate(this.membership());
    }
    this.backOff.reset();
    return successRefreshMs(this.settings, Math.min(...answer.map((resolved) => resolved.ttlSeconds)));
  }

  /** Every configured group with the hosts its names resolved to, in configuration order. */
  private membership(): LocalityLbEndpoints[] {
    return this.settings.endpoints.map((group) => ({
      ...group,
      lbEndpoints: this.targets.filter((target) => target.group === group).flatMap((target) => target.hosts),
    }));
  }
}
