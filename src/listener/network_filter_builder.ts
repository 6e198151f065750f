// Builds a listener's filter chain from the model (Envoy's listener factory): its terminal
// network filter, with the HTTP filter chain and route table of a connection manager. Pure: no
// socket is touched, so `--mode validate` and the supervisor build what a worker builds, by this
// same code, and refuse a configuration a worker could not run before any worker starts.

import { atField, FieldError } from '../config/errors';
import type { Bootstrap, ListenerConfig, NetworkFilterConfig } from '../config/model';
import type { Clock } from '../common/clock';
import { HttpConnectionManagerFactory } from '../filters/network/http_connection_manager';
import { TcpProxyFactory } from '../filters/network/tcp_proxy';
import type { HttpFilterContext } from '../filters/http/http_filter_registry';
import type { LoggerFactory } from '../log/logger_api';
import type { RuntimeSource } from '../runtime/live_runtime';
import type { DrainDecider } from '../server/drain_decider';
import type { StatsStore } from '../stats/stats';
import { addressString } from '../upstream/address';
import type { ClusterManager } from '../upstream/cluster_manager';
import type { NetworkFilterFactory } from './network_filter';

export interface NetworkFilterDeps {
  /** The configuration the listeners come from; its localAddress feeds x-forwarded-for. */
  readonly bootstrap: Bootstrap;
  readonly stats: StatsStore;
  readonly clusters: ClusterManager;
  readonly log: LoggerFactory;
  readonly drain: DrainDecider;
  readonly runtime: RuntimeSource;
  /** The admin /healthcheck/fail state as this process knows it (the health check filter's input). */
  readonly healthCheckFailed: () => boolean;
  /** Times what HTTP filters cache (the health check filter's cache_time). */
  readonly clock: Clock;
}

export class NetworkFilterBuilder {
  private readonly filterContext: HttpFilterContext;

  constructor(private readonly deps: NetworkFilterDeps) {
    this.filterContext = {
      clusters: deps.clusters,
      healthCheckFailed: deps.healthCheckFailed,
      serviceCluster: deps.bootstrap.node.cluster,
      clock: deps.clock,
    };
  }

  /**
   * The terminal filter of `bootstrap.listeners[index]`.
   * @throws FieldError naming the field under `static_resources.listeners[index]` it cannot build
   */
  listenerFilter(index: number): NetworkFilterFactory {
    const config = this.deps.bootstrap.listeners[index];
    return atField(`static_resources.listeners[${index}]`, () => this.terminalFilter(config));
  }

  private terminalFilter(config: ListenerConfig): NetworkFilterFactory {
    const chains = config.filterChains;
    if (chains.length === 0) throw new FieldError('filter_chains', 'no filter chains specified');
    // No filter_chain_match is taken (see capabilities.ts): every chain matches everything, so a
    // second one is Envoy's duplicate matching rules.
    if (chains.length > 1) {
      throw new FieldError(
        'filter_chains[1]',
        `error adding listener '${addressString(config.address)}': multiple filter chains with the same matching rules are defined`,
      );
    }
    const filters = chains[0].filters;
    if (filters.length !== 1) {
      throw new FieldError('filter_chains[0].filters', `the filter chain must hold exactly one (terminal) filter, got ${filters.length}`);
    }
    return atField('filter_chains[0].filters[0].typed_config', () => this.filterFactory(config, filters[0]));
  }

  private filterFactory(listener: ListenerConfig, filter: NetworkFilterConfig): NetworkFilterFactory {
    const { stats, clusters, drain, log, bootstrap, runtime } = this.deps;
    const bufferLimitBytes = listener.perConnectionBufferLimitBytes;
    switch (filter.kind) {
      case 'tcp_proxy':
        return new TcpProxyFactory(filter, { stats, clusters, bufferLimitBytes });
      case 'http_connection_manager':
        return new HttpConnectionManagerFactory(filter, {
          stats,
          clusters,
          drain,
          log: log('http'),
          bufferLimitBytes,
          localAddress: bootstrap.localAddress,
          runtime,
          filterContext: this.filterContext,
        });
    }
  }
}
