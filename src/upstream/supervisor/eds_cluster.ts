// EDS: the cluster's hosts are a ClusterLoadAssignment its config source delivers, each update
// the whole assignment. It is checked as a static load_assignment is (the protos' rules, what
// this build honors, the endpoint rules) before it replaces anything: a bad one is rejected
// and the cluster keeps its hosts. An assignment with endpoint_stale_after that no other
// replaces in time goes stale, and the cluster is left with none (Envoy 1.16's EDS cluster).

import type { ClusterConfig, LoadAssignmentPolicy } from '../../config/model';
import type { TimeoutHandle } from '../../common/clock';
import { checkLoadAssignmentCapabilities } from '../../config/capabilities';
import { clusterLoadAssignment } from '../../config/model_builder';
import { protoSchema } from '../../config/schema';
import { validateLoadAssignment } from '../../config/validation/clusters';
import { checkMessageProtoRules } from '../../config/validation/proto_rules';
import type { ConfigSourceConfig } from '../../config/config_source';
import { ENDPOINT_RESOURCE } from '../../config/xds/resource_types';
import { type DecodedResource, type Subscription, SubscriptionStats } from '../../config/xds/subscription';
import type { JsonObject } from '../../config/json';
import type { Logger } from '../../log/logger_api';
import type { Counter } from '../../stats/stats';
import type { ClusterDiscovery, ClusterType, DiscoveryContext } from './cluster_discovery';
import { type DiscoveredHost, discoveredHosts } from '../shared/membership';

/** The rejection of an update that carries something other than this cluster's one assignment. */
export class EdsResourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EdsResourceError';
  }
}

/** What one ClusterLoadAssignment resource makes of the cluster: its hosts and its policy. */
export interface EdsAssignment {
  readonly hosts: readonly DiscoveredHost[];
  readonly policy: LoadAssignmentPolicy;
}

/**
 * The hosts and policy of one ClusterLoadAssignment resource.
 * @throws FieldError at the first field (paths from the resource) a static load_assignment could not have either
 */
export function edsAssignment(resource: JsonObject): EdsAssignment {
  checkMessageProtoRules(protoSchema(), ENDPOINT_RESOURCE.v3TypeName, resource, '');
  checkLoadAssignmentCapabilities(resource);
  validateLoadAssignment(resource, '', 'ip');
  const assignment = clusterLoadAssignment(resource);
  return { hosts: discoveredHosts(assignment.endpoints), policy: assignment.policy };
}

class EdsDiscovery implements ClusterDiscovery {
  readonly initialized: Promise<void>;
  private settle: () => void = () => undefined;
  private subscription: Subscription | null = null;
  /** The last accepted assignment, as text: an update that repeats it rebuilds nothing. */
  private current: string | null = null;
  /** Runs out endpoint_stale_after after the last assignment that set it. */
  private staleTimer: TimeoutHandle | null = null;
  private readonly updateEmpty: Counter;
  private readonly updateNoRebuild: Counter;
  private readonly assignmentTimeoutReceived: Counter;
  private readonly assignmentStale: Counter;
  /** The policy of an assignment that sets none: what a stale one gives way to. */
  private readonly emptyPolicy = clusterLoadAssignment({}).policy;
  private readonly log: Logger;

  constructor(
    private readonly serviceName: string,
    private readonly source: ConfigSourceConfig,
    private readonly context: DiscoveryContext,
  ) {
    this.log = context.log.forFile(__filename);
    this.initialized = new Promise((resolve) => (this.settle = resolve));
    this.updateEmpty = context.stats.counter('update_empty');
    this.updateNoRebuild = context.stats.counter('update_no_rebuild');
    this.assignmentTimeoutReceived = context.stats.counter('assignment_timeout_received');
    this.assignmentStale = context.stats.counter('assignment_stale');
  }

  start(onHosts: AssignmentListener): void {
    const stats = new SubscriptionStats(this.context.stats);
    this.subscription = this.context.subscriptions.subscribe(
      this.source,
      ENDPOINT_RESOURCE,
      {
        onConfigUpdate: (resources) => this.onConfigUpdate(resources, onHosts),
        // The cluster goes on with what it has (nothing, at first), as Envoy's EDS cluster does.
        onConfigUpdateFailed: () => this.settle(),
      },
      stats,
    );
    this.subscription.start([this.serviceName]);
  }

  close(): void {
    this.subscription?.close();
    this.subscription = null;
    this.disarmStaleTimer();
  }

  private onConfigUpdate(resources: readonly DecodedResource[], onHosts: AssignmentListener): void {
    // A state-of-the-world response without the assignment keeps the endpoints: xDS deletes
    // only listeners and clusters by leaving them out.
    if (resources.length === 0) {
      this.log.debug(`missing ClusterLoadAssignment for ${this.serviceName} in an EDS update`);
      this.updateEmpty.inc();
      this.settle();
      return;
    }
    // A file holds every assignment of its type; ours is the one named for the cluster.
    const ours = resources.filter((r) => r.name === this.serviceName);
    if (ours.length === 0) {
      throw new EdsResourceError(`Unexpected EDS cluster (expecting ${this.serviceName}): ${resources.map((r) => r.name).join(', ')}`);
    }
    if (ours.length > 1) throw new EdsResourceError(`Unexpected EDS resource length: ${ours.length} resources named ${this.serviceName}`);
    const assignment = edsAssignment(ours[0]!.resource);
    // Every accepted assignment restarts the staleness clock, or stops it when it sets none.
    this.disarmStaleTimer();
    const staleAfterMs = assignment.policy.endpointStaleAfterMs;
    if (staleAfterMs !== null) {
      this.assignmentTimeoutReceived.inc();
      this.staleTimer = this.context.clock.setTimeout(() => this.onAssignmentStale(onHosts), staleAfterMs);
    }
    this.apply(assignment, onHosts);
    this.settle();
  }

  /** As Envoy, the stale assignment gives way to an empty one: no endpoints, the default policy. */
  private onAssignmentStale(onHosts: AssignmentListener): void {
    this.staleTimer = null;
    this.apply({ hosts: [], policy: this.emptyPolicy }, onHosts);
    this.assignmentStale.inc();
  }

  private apply(assignment: EdsAssignment, onHosts: AssignmentListener): void {
    const text = JSON.stringify(assignment);
    if (text === this.current) {
      this.updateNoRebuild.inc();
      return;
    }
    this.current = text;
    onHosts(assignment.hosts, assignment.policy);
  }

  private disarmStaleTimer(): void {
    if (this.staleTimer === null) return;
    this.context.clock.clearTimeout(this.staleTimer);
    this.staleTimer = null;
  }
}

type AssignmentListener = (hosts: readonly DiscoveredHost[], policy: LoadAssignmentPolicy) => void;

export const EDS_CLUSTER: ClusterType = {
  name: 'EDS',
  secondary: true,
  create: (config: ClusterConfig, context) => {
    // Validation refuses an EDS cluster without eds_cluster_config.
    const eds = config.edsClusterConfig!;
    return new EdsDiscovery(eds.serviceName, eds.edsConfig, context);
  },
};
