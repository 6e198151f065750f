// What Envoy requires before it subscribes to xDS resources, checked when the configuration is
// loaded (in --mode validate too, as Envoy's validation server creates its subscriptions): a node
// with an identity, which a management server tells nodes apart by, and for a file source a file
// that exists, so that a mistyped path fails at once rather than serving nothing.

import * as fs from 'node:fs';
import { FieldError } from '../errors';
import type { NodeInfo } from '../model';
import type { ConfigSourceConfig } from './config_source';
import { resourceTypeUrl, type ResourceType } from './resource_types';

/**
 * @param node the node after --service-node and --service-cluster
 * @param path the config source's field path, e.g. `dynamic_resources.cds_config`
 * @throws FieldError with Envoy's message
 */
export function checkSubscriptionPreconditions(node: NodeInfo, source: ConfigSourceConfig, type: ResourceType, path: string): void {
  if (node.id === '' || node.cluster === '') {
    throw new FieldError(
      path,
      `${resourceTypeUrl(type, source.resourceApiVersion)}: node 'id' and 'cluster' are required. Set it either in 'node' config or via --service-node and --service-cluster options.`,
    );
  }
  if (source.kind === 'path' && !fs.existsSync(source.path)) {
    throw new FieldError(`${path}.path`, `paths must refer to an existing path in the system: '${source.path}' does not exist`);
  }
}
