// In a worker: the route configurations RDS brought, by key (rdsKey), and the connection
// managers serving each (Envoy's thread-local route config slot). An update reaches every
// connection manager that names it, which swaps its route table in place.

import type { RouteConfiguration } from '../../../config/model';
import type { KeyedRouteConfig } from '../../../config/rds_sources';

/** A connection manager's hook: the route configuration of its key changed. */
export type RouteConfigListener = (config: RouteConfiguration) => void;

export class RouteConfigUpdates {
  private readonly configs: Map<string, RouteConfiguration>;
  private readonly listeners = new Map<string, RouteConfigListener[]>();

  /** @param initial the configurations the supervisor has now (a worker's start) */
  constructor(initial: readonly KeyedRouteConfig[]) {
    this.configs = new Map(initial.map(({ key, config }) => [key, config]));
  }

  /**
   * `listener` gets each later configuration of `key`.
   * @returns the configuration of `key` now; undefined until RDS brings one
   */
  watch(key: string, listener: RouteConfigListener): RouteConfiguration | undefined {
    const listeners = this.listeners.get(key);
    if (listeners === undefined) this.listeners.set(key, [listener]);
    else listeners.push(listener);
    return this.configs.get(key);
  }

  update({ key, config }: KeyedRouteConfig): void {
    this.configs.set(key, config);
    for (const listener of this.listeners.get(key) ?? []) listener(config);
  }
}
