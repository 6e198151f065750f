// The route configurations RDS brings, in the supervisor (Envoy's RouteConfigProviderManager):
// one subscription per (config source, route_config_name) however many connection managers name
// it, its stats under the first one's stat_prefix. Each accepted configuration is sent to the
// workers by its key; a worker started later gets the current ones with its start.

import type { Bootstrap, RouteConfiguration } from '../config/model';
import { type KeyedRouteConfig, rdsSourcesOf, type RdsSource } from '../config/rds_sources';
import type { JsonObject } from '../config/json';
import type { SubscriptionFactory } from '../config/xds/subscription_factory';
import type { Logger } from '../log/logger_api';
import { type Scope, sanitizeStatName } from '../stats/stats';
import { RdsSubscription, type RdsRouteConfigState } from './rds_subscription';

export interface RouteConfigProviderDeps {
  readonly subscriptions: SubscriptionFactory;
  /** The root scope: each subscription's stats are `http.<stat_prefix>.rds.<route_config_name>.*`. */
  readonly stats: Scope;
  /**
   * Checks a resource as an inline route_config is checked, against the validation context of
   * the moment (the clusters active now), and builds what a worker would build from it.
   * @throws FieldError at a path relative to the resource
   */
  readonly load: (resource: JsonObject) => RouteConfiguration;
  readonly onUpdate: (update: KeyedRouteConfig) => void;
  readonly log: Logger;
}

export class RouteConfigProviderManager {
  private readonly subscriptions = new Map<string, RdsSubscription>();

  /** Subscribes for every connection manager of `bootstrap` with `rds` (none: nothing happens). */
  constructor(
    bootstrap: Bootstrap,
    private readonly deps: RouteConfigProviderDeps,
  ) {
    for (const source of rdsSourcesOf(bootstrap)) {
      if (!this.subscriptions.has(source.key)) this.subscriptions.set(source.key, this.subscription(source));
    }
  }

  /** Starts every subscription; settles once each has had its first update or failure (Envoy's init targets). */
  start(): Promise<void> {
    for (const subscription of this.subscriptions.values()) subscription.start();
    return Promise.all([...this.subscriptions.values()].map((subscription) => subscription.initialized)).then(() => undefined);
  }

  /**
   * The subscriptions of a listener LDS brought (started if new): settles once each has had its
   * first update or failure, which the listener waits for before it takes traffic (warming). A
   * subscription stays once made, as long as the server runs.
   */
  warm(sources: readonly RdsSource[]): Promise<void> {
    for (const source of sources) {
      if (this.subscriptions.has(source.key)) continue;
      const subscription = this.subscription(source);
      this.subscriptions.set(source.key, subscription);
      subscription.start();
    }
    return Promise.all(sources.map((source) => this.subscriptions.get(source.key)!.initialized)).then(() => undefined);
  }

  /** The route configurations serving now, for a worker (re)started. */
  routeConfigs(): KeyedRouteConfig[] {
    return [...this.subscriptions].flatMap(([key, subscription]) => {
      const state = subscription.current();
      return state === null ? [] : [{ key, config: state.config }];
    });
  }

  /** What /config_dump lists as dynamic_route_configs: those that came. */
  dynamicRouteConfigs(): RdsRouteConfigState[] {
    return [...this.subscriptions.values()].flatMap((subscription) => subscription.current() ?? []);
  }

  close(): void {
    for (const subscription of this.subscriptions.values()) subscription.close();
  }

  private subscription(source: RdsSource): RdsSubscription {
    const { deps } = this;
    return new RdsSubscription({
      rds: source.rds,
      subscriptions: deps.subscriptions,
      // Envoy's docs: a `:` of the name is `_` in the stats tree.
      stats: deps.stats.scope(`http.${source.statPrefix}.rds.${sanitizeStatName(source.rds.routeConfigName)}`),
      load: deps.load,
      onUpdate: (config) => deps.onUpdate({ key: source.key, config }),
      log: deps.log,
    });
  }
}
