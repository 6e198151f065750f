// The cluster discovery service client (Envoy's CdsApiImpl): one subscription to Cluster
// resources; each state-of-the-world update is compared with the clusters CDS added before:
// new names are added, changed ones modified (both warm first), missing ones removed.
// As Envoy 1.16, the good resources of an update apply and the bad ones are reported together,
// which rejects (NACKs) the update; the version shown is the last one anything applied from.
// A large update is applied in slices that yield to the event loop; it is answered after all of it.

import type { ConfigExtensions } from '../../config/extension';
import { forEachInSlices } from '../../common/event_loop_slices';
import type { ConfigSourceConfig } from '../../config/config_source';
import { loadClusterResource } from '../../config/cluster_resource';
import type { ProtoSchema } from '../../config/schema';
import { CLUSTER_RESOURCE } from '../../config/xds/resource_types';
import type { ConfigUpdateFailureReason, DecodedResource, Subscription, SubscriptionCallbacks } from '../../config/xds/subscription';
import { SubscriptionStats } from '../../config/xds/subscription';
import type { SubscriptionFactory } from '../../config/xds/subscription_factory';
import type { Logger } from '../../log/logger_api';
import type { Scope } from '../../stats/stats';
import type { SupervisorClusterManager } from './supervisor_cluster_manager';

/**
 * Resources loaded and applied per turn of the event loop: a few tens of milliseconds at most,
 * so that admin, signals and xDS streams are served during a 10,000-cluster update.
 */
const UPDATE_SLICE = 100;

/** What CDS changes in the cluster manager. */
export type ClusterSet = Pick<SupervisorClusterManager, 'addOrUpdateCluster' | 'removeCluster' | 'dynamicClusterNames'>;

export interface CdsApiDeps {
  /** dynamic_resources.cds_config. */
  readonly source: ConfigSourceConfig;
  readonly subscriptions: SubscriptionFactory;
  readonly clusters: ClusterSet;
  readonly schema: ProtoSchema;
  /** --disable-extensions, resolved: a resource using one is refused as a static cluster would be. */
  readonly disabledExtensions: ReadonlySet<string>;
  /** The registry a resource's extensions are found in, as a static cluster's are. */
  readonly extensions: ConfigExtensions;
  /** `cluster_manager.cds`: the subscription's statistics. */
  readonly stats: Scope;
  readonly log: Logger;
  /** The wall clock of last_updated (/config_dump). */
  readonly now?: () => Date;
}

export class CdsApi implements SubscriptionCallbacks {
  private subscription: Subscription | null = null;
  private closed = false;
  private version = '';
  private readonly log: Logger;
  private initialize: (() => void) | null = null;
  /**
   * Settles once the first update has been applied and the clusters it brought have warmed, or
   * the first update failed (timed out, was rejected): Envoy's init manager waits for this
   * before the listeners start.
   */
  readonly initialized: Promise<void>;

  constructor(private readonly deps: CdsApiDeps) {
    this.log = deps.log.forFile(__filename);
    this.initialized = new Promise((resolve) => (this.initialize = resolve));
  }

  /** The version_info of the last update anything was applied from; '' before the first. */
  versionInfo(): string {
    return this.version;
  }

  start(): void {
    const stats = new SubscriptionStats(this.deps.stats);
    this.subscription = this.deps.subscriptions.subscribe(this.deps.source, CLUSTER_RESOURCE, this, stats);
    // Every cluster there is: CDS is a wildcard subscription.
    this.subscription.start([]);
  }

  close(): void {
    this.closed = true;
    this.subscription?.close();
    this.subscription = null;
    this.initializeOnce(Promise.resolve());
  }

  /**
   * Applies the update in slices of UPDATE_SLICE resources (then of removals) with a turn of the
   * event loop between them; the transport answers it, and sends the next, once it settles.
   */
  async onConfigUpdate(resources: readonly DecodedResource[], versionInfo: string): Promise<void> {
    const { clusters, schema } = this.deps;
    const log = this.log;
    const toRemove = clusters.dynamicClusterNames();
    for (const { name } of resources) toRemove.delete(name);
    log.info(`cds: add ${resources.length} cluster(s), remove ${toRemove.size} cluster(s)`);
    const lastUpdated = (this.deps.now ?? (() => new Date()))();
    const seen = new Set<string>();
    const warmed: Promise<void>[] = [];
    const errors: string[] = [];
    let anyApplied = false;
    const closed = () => this.closed;
    const added = await forEachInSlices(
      resources,
      UPDATE_SLICE,
      ({ name, resource, version, path }, i) => {
        try {
          // The first of two resources of a name has been applied already, as in Envoy.
          if (seen.has(name)) throw new Error(`duplicate cluster ${name} found`);
          seen.add(name);
          const { config, source } = loadClusterResource(schema, resource, path ?? `resources[${i}]`, this.deps.disabledExtensions, this.deps.extensions);
          const result = clusters.addOrUpdateCluster(config, { versionInfo: version ?? versionInfo, lastUpdated, source });
          if (result.applied) {
            anyApplied = true;
            warmed.push(result.warmed);
            log.debug(`cds: add/update cluster '${name}'`);
          }
        } catch (error) {
          errors.push(`${name}: ${(error as Error).message}`);
        }
      },
      closed,
    );
    const removed =
      added &&
      (await forEachInSlices(
        [...toRemove],
        UPDATE_SLICE,
        (name) => {
          if (!clusters.removeCluster(name)) return;
          anyApplied = true;
          log.debug(`cds: remove cluster '${name}'`);
        },
        closed,
      ));
    // Closed meanwhile (the server stops): what is left of the update no longer matters.
    if (!removed) return;
    if (anyApplied) this.version = versionInfo;
    this.initializeOnce(Promise.all(warmed));
    if (errors.length > 0) throw new Error(`Error adding/updating cluster(s) ${errors.join(', ')}`);
  }

  /** The server starts without CDS clusters rather than not at all, as Envoy's does. */
  onConfigUpdateFailed(reason: ConfigUpdateFailureReason, error: Error | null): void {
    if (reason === 'fetch_timeout') this.log.warn('cds: initial fetch timed out; starting without the clusters it would bring');
    else if (error !== null) this.log.warn(`cds: update failed (${reason}): ${error.message}`);
    this.initializeOnce(Promise.resolve());
  }

  private initializeOnce(done: Promise<unknown>): void {
    const initialize = this.initialize;
    if (initialize === null) return;
    this.initialize = null;
    void done.then(initialize, initialize);
  }
}
