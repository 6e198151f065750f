// Envoy refuses to subscribe to xDS resources for a node without an identity: a management
// server tells nodes apart by node.id and groups them by node.cluster.

import { FieldError } from '../errors';
import type { NodeInfo } from '../model';
import type { ConfigSourceConfig } from './config_source';
import { resourceTypeUrl, type ResourceType } from './resource_types';

/**
 * @param node the node after --service-node and --service-cluster
 * @param path the config source's field path, e.g. `dynamic_resources.cds_config`
 * @throws FieldError with Envoy's message when node.id or node.cluster is empty
 */
export function requireNodeIdentity(node: NodeInfo, source: ConfigSourceConfig, type: ResourceType, path: string): void {
  if (node.id !== '' && node.cluster !== '') return;
  throw new FieldError(
    path,
    `${resourceTypeUrl(type, source.resourceApiVersion)}: node 'id' and 'cluster' are required. Set it either in 'node' config or via --service-node and --service-cluster options.`,
  );
}
