// One rtds_layer's subscription (Envoy's RtdsSubscription): the Runtime resource the layer names,
// from its config source. An accepted update replaces the layer's values and the runtime reloads;
// a bad one is rejected (NACKed with the field at fault) and the layer keeps what it had. The
// server's start waits for the first update or the first failure (a rejection, the initial fetch
// timeout), as Envoy's RTDS init target does.

import type { RtdsRuntimeLayer } from '../config/model';
import type { ProtoSchema } from '../config/schema';
import { RUNTIME_RESOURCE } from '../config/xds/resource_types';
import type { ConfigUpdateFailureReason, DecodedResource, Subscription, SubscriptionCallbacks, SubscriptionStats } from '../config/xds/subscription';
import type { SubscriptionFactory } from '../config/xds/subscription_factory';
import type { Logger } from '../log/logger_api';
import { rtdsLayerValues } from './rtds_resource';
import type { RuntimeLoader } from './runtime_loader';

export interface RtdsSubscriptionDeps {
  readonly layer: RtdsRuntimeLayer;
  readonly subscriptions: SubscriptionFactory;
  readonly schema: ProtoSchema;
  /** Where accepted values go. */
  readonly runtime: Pick<RuntimeLoader, 'setRtdsLayer'>;
  /** The subscription's statistics: Envoy 1.16 keeps them in the root scope, shared by every RTDS layer. */
  readonly stats: SubscriptionStats;
  readonly log: Logger;
}

export class RtdsSubscription implements SubscriptionCallbacks {
  private subscription: Subscription | null = null;
  private initialize: (() => void) | null = null;
  private readonly log: Logger;
  /** Settles at the first update, or the first failure: the server goes on without it then. */
  readonly initialized: Promise<void>;

  constructor(private readonly deps: RtdsSubscriptionDeps) {
    this.log = deps.log.forFile(__filename);
    this.initialized = new Promise((resolve) => (this.initialize = resolve));
  }

  /** @throws UnsupportedConfigSourceError for a source this build does not run (validation refuses it first) */
  start(): void {
    const { layer, subscriptions, stats } = this.deps;
    this.subscription = subscriptions.subscribe(layer.source, RUNTIME_RESOURCE, this, stats);
    this.subscription.start([layer.resourceName]);
  }

  close(): void {
    this.subscription?.close();
    this.subscription = null;
    this.ready();
  }

  /**
   * @throws FieldError (or Error) to reject the update: the layer keeps its values, and the
   *   transport reports the rejection through onConfigUpdateFailed
   */
  onConfigUpdate(resources: readonly DecodedResource[], versionInfo: string): void {
    const { layer, schema, runtime } = this.deps;
    const values = rtdsLayerValues(schema, resources, layer.resourceName);
    this.log.debug(`rtds: layer '${layer.name}' updated to version '${versionInfo}' (${values.length} keys)`);
    runtime.setRtdsLayer(layer.name, values);
    this.ready();
  }

  /** A rejection or the initial fetch timeout: Envoy's init target is ready then too, the layer empty or as it was. */
  onConfigUpdateFailed(reason: ConfigUpdateFailureReason, error: Error | null): void {
    const layer = this.deps.layer;
    if (reason === 'fetch_timeout') this.log.warn(`rtds: initial fetch of layer '${layer.name}' timed out; starting with it empty`);
    else if (error !== null) this.log.warn(`rtds: update of layer '${layer.name}' failed (${reason}): ${error.message}`);
    this.ready();
  }

  private ready(): void {
    const initialize = this.initialize;
    this.initialize = null;
    initialize?.();
  }
}
