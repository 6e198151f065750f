// A subscription to one type of xDS resource (Envoy's Config::Subscription): whatever carries it
// (a file, a gRPC stream of its own, the ADS stream, REST polling), the subscriber sees only
// whole state-of-the-world updates and failures. An update the subscriber throws on is rejected:
// the transport NACKs it and the subscriber keeps what it had.

import type { Counter, Gauge, Scope } from '../../stats/stats';
import type { JsonObject } from '../json';

/** One resource of an update, decoded and upgraded to its v3 ProtoJSON form (`@type` removed). */
export interface DecodedResource {
  /** The resource's name (Cluster.name, ClusterLoadAssignment.cluster_name). */
  readonly name: string;
  readonly resource: JsonObject;
  /** Delta xDS: the resource's own version, which Envoy shows for it instead of the update's. */
  readonly version?: string;
  /**
   * Delta xDS: where it sat in the response that brought it (`resources[2].resource`), which a
   * subscriber names its errors under; a state-of-the-world subscriber uses its index.
   */
  readonly path?: string;
}

/** Why an update did not come, as Envoy's ConfigUpdateFailureReason. */
export type ConfigUpdateFailureReason = 'connection_failure' | 'fetch_timeout' | 'update_rejected';

export interface SubscriptionCallbacks {
  /**
   * The complete set of resources the subscription names, at `versionInfo`. A subscriber that
   * applies a large update in slices returns a promise: the transport ACKs or NACKs once it
   * settles, and delivers nothing else to it before.
   * @throws Error (a FieldError for a bad field), or rejects with one, to reject the update; the message goes back as the NACK's error_detail
   */
  onConfigUpdate(resources: readonly DecodedResource[], versionInfo: string): void | Promise<void>;
  /**
   * No update this time. The subscriber keeps serving what it has; the first failure also ends
   * its initialization (as Envoy's init manager does on initial_fetch_timeout).
   */
  onConfigUpdateFailed(reason: ConfigUpdateFailureReason, error: Error | null): void;
}

export interface Subscription {
  /** Starts fetching; `resourceNames` empty means every resource of the type (CDS, wildcard). */
  start(resourceNames: readonly string[]): void;
  /** Stops timers and streams; no callback follows. */
  close(): void;
}

/** Envoy's per-subscription statistics, under the subscriber's prefix (`cluster_manager.cds.`, `cluster.<name>.`). */
export class SubscriptionStats {
  readonly update_attempt: Counter;
  readonly update_success: Counter;
  readonly update_failure: Counter;
  readonly update_rejected: Counter;
  readonly init_fetch_timeout: Counter;
  /** Milliseconds since the epoch of the last accepted update. */
  readonly update_time: Gauge;
  /** A hash of the last accepted version_info. */
  readonly version: Gauge;

  constructor(scope: Scope) {
    this.update_attempt = scope.counter('update_attempt');
    this.update_success = scope.counter('update_success');
    this.update_failure = scope.counter('update_failure');
    this.update_rejected = scope.counter('update_rejected');
    this.init_fetch_timeout = scope.counter('init_fetch_timeout');
    // Each epoch reports its own subscription's state, as Envoy's NeverImport gauges.
    this.update_time = scope.gauge('update_time', 'never_import');
    this.version = scope.gauge('version', 'never_import');
  }
}
