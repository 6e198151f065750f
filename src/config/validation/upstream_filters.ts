// A cluster's upstream network filters (Cluster.filters), each an extension of the registry's
// proxy.filters.upstream_network. Envoy 1.16 registers none (its upstream PROXY protocol is a
// transport socket: upstream_transport_sockets.ts), nor does this build.

import type { ValidationContext } from '../extension';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageList } from '../json';
import { validateExtension } from './extensions';

export function validateUpstreamFilters(cluster: JsonObject, clusterPath: string, context: ValidationContext): void {
  messageList(cluster, 'filters').forEach((filter, i) => {
    validateExtension('proxy.filters.upstream_network', filter, indexPath(childPath(clusterPath, 'filters'), i), context);
  });
}
