// A cluster's upstream network filters (Cluster.filters). Envoy 1.16 registers none (its
// upstream PROXY protocol is a transport socket: upstream_transport_sockets.ts), nor does this
// build: every entry names an extension there is no implementation for.

import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageList, stringField } from '../json';
import { unknownExtension } from './extensions';

export function validateUpstreamFilters(cluster: JsonObject, clusterPath: string): void {
  const filters = messageList(cluster, 'filters');
  if (filters.length === 0) return;
  const path = indexPath(childPath(clusterPath, 'filters'), 0);
  throw new FieldError(childPath(path, 'name'), unknownExtension(stringField(filters[0]!, 'name')));
}
