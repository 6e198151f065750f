// --service-cluster, --service-node and --service-zone: set, they replace the bootstrap's
// node.cluster, node.id and node.locality.zone (Envoy's LocalInfo), for everything that reads
// the node. The bootstrap's source JSON is kept as written, as /config_dump shows it.

import { FieldError } from './errors';
import type { Bootstrap, Locality, NodeInfo } from './model';

export interface ServiceOverrides {
  /** '' leaves the bootstrap's value. */
  readonly serviceCluster: string;
  readonly serviceNode: string;
  readonly serviceZone: string;
}

export function applyServiceOverrides(bootstrap: Bootstrap, overrides: ServiceOverrides): Bootstrap {
  const { node } = bootstrap;
  return {
    ...bootstrap,
    node: {
      id: overrides.serviceNode || node.id,
      cluster: overrides.serviceCluster || node.cluster,
      locality: { ...node.locality, zone: overrides.serviceZone || node.locality.zone },
    },
  };
}

/**
 * The node's locality, or null when it has none: every field empty, as when the bootstrap sets
 * no node.locality and no --service-zone is given (the model keeps no other trace of an unset
 * message). Zone-aware routing has a local locality only when the node has one, as in Envoy.
 */
export function nodeLocality(node: NodeInfo): Locality | null {
  const { locality } = node;
  return locality.region !== '' || locality.zone !== '' || locality.subZone !== '' ? locality : null;
}

/**
 * Envoy's checkLocalInfo: what needs the node's identity (a subscription, the TCP statsd sink)
 * refuses to start without it, saying how to give it.
 * @param node the node after --service-node and --service-cluster
 * @param what Envoy's prefix of the message (a resource type URL, `tcp statsd`)
 * @throws FieldError at `path`
 */
export function requireNodeIdentity(node: NodeInfo, what: string, path: string): void {
  if (node.id === '' || node.cluster === '') {
    throw new FieldError(path, `${what}: node 'id' and 'cluster' are required. Set it either in 'node' config or via --service-node and --service-cluster options.`);
  }
}
