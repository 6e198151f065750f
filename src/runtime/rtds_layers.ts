// Every rtds_layer's subscription, started together once the primary clusters are up (Envoy's
// LoaderImpl::startRtdsSubscriptions): `initialized` settles when each has had its first update
// or failure, which is what the server waits for before it initializes what comes next.

import type { RuntimeLayerConfig } from '../config/model';
import { SubscriptionStats } from '../config/xds/subscription';
import type { Scope } from '../stats/stats';
import { RtdsSubscription, type RtdsSubscriptionDeps } from './rtds_subscription';

export interface RtdsLayersDeps extends Omit<RtdsSubscriptionDeps, 'layer' | 'stats'> {
  /** Envoy 1.16 counts RTDS subscriptions in the root scope (update_attempt, ...; `runtime.` only from 1.17). */
  readonly rootScope: Scope;
}

export class RtdsLayers {
  private readonly layers: readonly RtdsSubscription[];
  readonly initialized: Promise<void>;

  constructor(configs: readonly RuntimeLayerConfig[], deps: RtdsLayersDeps) {
    const { rootScope, ...common } = deps;
    const rtds = configs.flatMap((layer) => (layer.kind === 'rtds' ? [layer] : []));
    // One set of statistics for all of them (the names are the same in Envoy's root scope), and
    // none without RTDS.
    const stats = rtds.length === 0 ? undefined : new SubscriptionStats(rootScope);
    this.layers = stats === undefined ? [] : rtds.map((layer) => new RtdsSubscription({ ...common, layer, stats }));
    this.initialized = Promise.all(this.layers.map((layer) => layer.initialized)).then(() => undefined);
  }

  /** @throws UnsupportedConfigSourceError for a source this build does not run (validation refuses it first) */
  start(): void {
    for (const layer of this.layers) layer.start();
  }

  close(): void {
    for (const layer of this.layers) layer.close();
  }
}
