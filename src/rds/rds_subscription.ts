// One RDS subscription in the supervisor (Envoy's RdsRouteConfigSubscription): a route
// configuration by name from a config source, shared by every connection manager that names the
// same pair. Each update carries exactly that resource; it is checked as an inline route_config
// is, and a bad one is rejected (NACKed) naming the field, while the previous one keeps serving.
// A configuration whose content changed goes to the workers (config_reload); one that did not
// is only acknowledged, as Envoy compares hashes.

import { FieldError } from '../config/errors';
import type { JsonObject } from '../config/json';
import type { RdsConfig, RouteConfiguration } from '../config/model';
import { ROUTE_CONFIGURATION_RESOURCE } from '../config/xds/resource_types';
import type { ConfigUpdateFailureReason, DecodedResource, Subscription, SubscriptionCallbacks } from '../config/xds/subscription';
import { SubscriptionStats } from '../config/xds/subscription';
import type { SubscriptionFactory } from '../config/xds/subscription_factory';
import type { Logger } from '../log/logger_api';
import type { Counter, Scope } from '../stats/stats';

/** The route configuration being served, as /config_dump's dynamic_route_configs shows it. */
export interface RdsRouteConfigState {
  readonly config: RouteConfiguration;
  /** The resource as received (v3 JSON). */
  readonly source: JsonObject;
  /** The version_info of the update that brought this content. */
  readonly versionInfo: string;
  readonly lastUpdated: Date;
}

export interface RdsSubscriptionDeps {
  readonly rds: RdsConfig;
  readonly subscriptions: SubscriptionFactory;
  /** `http.<stat_prefix>.rds.<route_config_name>`, of the first connection manager that named it. */
  readonly stats: Scope;
  /**
   * A resource checked as an inline route_config is, and made into the model the workers build
   * their route tables from.
   * @throws FieldError at a path relative to the resource
   */
  readonly load: (resource: JsonObject) => RouteConfiguration;
  /** A new route configuration: every worker swaps the route tables of the connection managers that name it. */
  readonly onUpdate: (config: RouteConfiguration) => void;
  readonly log: Logger;
  /** The wall clock of last_updated (/config_dump). */
  readonly now?: () => Date;
}

export class RdsSubscription implements SubscriptionCallbacks {
  private subscription: Subscription | null = null;
  private state: RdsRouteConfigState | null = null;
  /** The JSON of the resource serving: an update with the same content reloads nothing. */
  private sourceText = '';
  private readonly log: Logger;
  private readonly configReload: Counter;
  private readonly updateEmpty: Counter;
  private initialize: (() => void) | null = null;
  /**
   * Settles at the first update, empty, rejected or failed (initial_fetch_timeout included):
   * Envoy's init manager holds the server's readiness until then.
   */
  readonly initialized: Promise<void>;

  constructor(private readonly deps: RdsSubscriptionDeps) {
    this.log = deps.log.forFile(__filename);
    this.configReload = deps.stats.counter('config_reload');
    this.updateEmpty = deps.stats.counter('update_empty');
    this.initialized = new Promise((resolve) => (this.initialize = resolve));
  }

  /** What serves now; null before the first accepted update. */
  current(): RdsRouteConfigState | null {
    return this.state;
  }

  /** @throws UnsupportedConfigSourceError for a source this build does not run (validation refuses it first) */
  start(): void {
    const stats = new SubscriptionStats(this.deps.stats);
    this.subscription = this.deps.subscriptions.subscribe(this.deps.rds.configSource, ROUTE_CONFIGURATION_RESOURCE, this, stats);
    this.subscription.start([this.deps.rds.routeConfigName]);
  }

  close(): void {
    this.subscription?.close();
    this.subscription = null;
    this.initializeOnce();
  }

  onConfigUpdate(resources: readonly DecodedResource[], versionInfo: string): void {
    const name = this.deps.rds.routeConfigName;
    if (resources.length === 0) {
      this.log.debug(`rds: missing RouteConfiguration for ${name} in onConfigUpdate()`);
      this.updateEmpty.inc();
      this.initializeOnce();
      return;
    }
    // Envoy 1.16's words for an update it cannot take.
    if (resources.length !== 1) throw new Error(`Unexpected RDS resource length: ${resources.length}`);
    const resource = resources[0]!;
    if (resource.name !== name) throw new Error(`Unexpected RDS configuration (expecting ${name}): ${resource.name}`);
    let config: RouteConfiguration;
    try {
      config = this.deps.load(resource.resource);
    } catch (error) {
      if (error instanceof FieldError) throw new Error(`Error updating route configuration ${name}: ${error.message}`);
      throw error;
    }
    const text = JSON.stringify(resource.resource);
    if (text !== this.sourceText) {
      this.sourceText = text;
      this.state = { config, source: resource.resource, versionInfo, lastUpdated: (this.deps.now ?? (() => new Date()))() };
      this.configReload.inc();
      this.log.debug(`rds: loading new configuration: config_name=${name} version=${versionInfo}`);
      this.deps.onUpdate(config);
    }
    this.initializeOnce();
  }

  /** The server starts with what it has (no routes: 404) rather than not at all, as Envoy's does. */
  onConfigUpdateFailed(reason: ConfigUpdateFailureReason, error: Error | null): void {
    const name = this.deps.rds.routeConfigName;
    if (reason === 'fetch_timeout') this.log.warn(`rds: initial fetch of ${name} timed out; serving without it until it comes`);
    else if (error !== null) this.log.warn(`rds: update of ${name} failed (${reason}): ${error.message}`);
    this.initializeOnce();
  }

  private initializeOnce(): void {
    const initialize = this.initialize;
    this.initialize = null;
    initialize?.();
  }
}
