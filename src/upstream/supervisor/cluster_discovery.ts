// What a cluster type does in the supervisor: finds the cluster's hosts (from its configuration,
// DNS, EDS) and reports each new result. The cluster manager turns results into versioned
// membership updates for the workers.

import type { ClusterConfig, LoadAssignmentPolicy, SocketAddress } from '../../config/model';
import type { Clock } from '../../common/clock';
import type { SubscriptionFactory } from '../../config/xds/subscription_factory';
import type { Logger } from '../../log/logger_api';
import type { Scope } from '../../stats/stats';
import type { DiscoveredHost } from '../shared/membership';

export interface ClusterDiscovery {
  /**
   * Begins discovery; `onHosts` receives every result, the whole discovered set each time, with
   * the policy of the assignment it came in (EDS), else the cluster's load_assignment's.
   */
  start(onHosts: (hosts: readonly DiscoveredHost[], policy?: LoadAssignmentPolicy) => void): void;
  /** Settles once the first result, or its failure, is in: the cluster is initialized. */
  readonly initialized: Promise<void>;
  /** Stops timers and closes sockets. */
  close(): void;
  /**
   * For a type whose hosts are made on demand (ORIGINAL_DST): destinations the workers' balancers
   * picked since they last said so. Other types have none.
   */
  hostsPicked?(addresses: readonly SocketAddress[]): void;
}

export interface DiscoveryContext {
  readonly log: Logger;
  /** The cluster's stats scope (`cluster.<stat name>`). */
  readonly stats: Scope;
  readonly clock: Clock;
  /** xDS subscriptions (EDS). */
  readonly subscriptions: SubscriptionFactory;
}

/** One cluster type: how its clusters find their hosts (the factory of its descriptor, src/extensions/clusters). */
export interface ClusterType {
  /**
   * Its key in the registry, as clusterTypeName gives it: a discovery type as `type` names it
   * (STATIC, STRICT_DNS, ...), or a custom type's extension name (`cluster_type.name`).
   */
  readonly name: string;
  /**
   * Envoy's secondary initialize phase (EDS, aggregate): its static clusters start once the
   * primary ones are initialized and the RTDS layers have their first updates.
   */
  readonly secondary?: true;
  create(config: ClusterConfig, context: DiscoveryContext): ClusterDiscovery;
}
