// A subscription carried by a gRPC mux, state of the world or delta (Envoy's
// GrpcSubscriptionImpl): its statistics, and the initial fetch timeout. update_attempt counts
// the first request and then each outcome (accepted, rejected, stream failure), as Envoy 1.16
// does. A stream failure is counted, not passed on: the subscriber keeps waiting for the
// reconnect, or for initial_fetch_timeout.

import type { Clock, TimeoutHandle } from '../../common/clock';
import type { Logger } from '../../log/logger_api';
import type { ResourceType } from './resource_types';
import type { DecodedResource, Subscription, SubscriptionCallbacks, SubscriptionStats } from './subscription';
import { versionHash } from './version_hash';
import type { MuxWatch, XdsMux } from './xds_mux';

export interface GrpcSubscriptionOptions {
  readonly typeUrl: string;
  readonly type: ResourceType;
  readonly initialFetchTimeoutMs: number;
  /** A mux of the subscription's own (not the shared ADS one), closed with it. */
  readonly ownsMux: boolean;
  readonly clock: Clock;
  readonly log: Logger;
}

export class GrpcSubscription implements Subscription {
  private readonly log: Logger;
  private watch: MuxWatch | null = null;
  private initTimer: TimeoutHandle | null = null;
  private closed = false;

  constructor(
    private readonly mux: XdsMux,
    private readonly callbacks: SubscriptionCallbacks,
    private readonly stats: SubscriptionStats,
    private readonly options: GrpcSubscriptionOptions,
  ) {
    this.log = options.log.forFile(__filename);
  }

  start(resourceNames: readonly string[]): void {
    const { initialFetchTimeoutMs, clock } = this.options;
    if (initialFetchTimeoutMs > 0) {
      this.initTimer = clock.setTimeout(() => {
        this.initTimer = null;
        this.stats.init_fetch_timeout.inc();
        this.stats.update_attempt.inc();
        this.log.warn(`gRPC config: initial fetch timed out for ${this.options.typeUrl}`);
        this.callbacks.onConfigUpdateFailed('fetch_timeout', null);
      }, initialFetchTimeoutMs);
    }
    this.watch = this.mux.addWatch(this.options.typeUrl, this.options.type, resourceNames, {
      onConfigUpdate: (resources, versionInfo) => this.onConfigUpdate(resources, versionInfo),
      onConfigUpdateFailed: (reason, error) => this.onConfigUpdateFailed(reason, error),
    });
    this.stats.update_attempt.inc();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.disableInitTimer();
    this.watch?.remove();
    if (this.options.ownsMux) this.mux.close();
  }

  private async onConfigUpdate(resources: readonly DecodedResource[], versionInfo: string): Promise<void> {
    if (this.closed) return;
    this.disableInitTimer();
    // A throw (or rejection) goes up to the mux, which NACKs and reports the rejection back here.
    await this.callbacks.onConfigUpdate(resources, versionInfo);
    // Closed while the subscriber applied it in slices: the update no longer counts.
    if (this.closed) return;
    const stats = this.stats;
    stats.update_success.inc();
    stats.update_attempt.inc();
    stats.update_time.set(Date.now());
    stats.version.set(versionHash(versionInfo));
  }

  private onConfigUpdateFailed(reason: 'connection_failure' | 'update_rejected', error: Error | null): void {
    if (this.closed) return;
    if (reason === 'connection_failure') {
      this.stats.update_failure.inc();
    } else {
      this.disableInitTimer();
      this.stats.update_rejected.inc();
      this.log.warn(`gRPC config for ${this.options.typeUrl} rejected: ${error?.message ?? ''}`);
      this.callbacks.onConfigUpdateFailed('update_rejected', error);
    }
    this.stats.update_attempt.inc();
  }

  private disableInitTimer(): void {
    if (this.initTimer !== null) this.options.clock.clearTimeout(this.initTimer);
    this.initTimer = null;
  }
}
