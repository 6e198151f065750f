// A cluster's upstream network filters (Cluster.filters): each must be one this build runs,
// with a typed_config of its type.

import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageList, stringField } from '../json';
import { canonicalExtensionName, CONFIG_TYPES, PROXY_PROTOCOL_UPSTREAM } from '../names';
import { typedConfig, unknownExtension } from './extensions';

export function validateUpstreamFilters(cluster: JsonObject, clusterPath: string): void {
  messageList(cluster, 'filters').forEach((filter, i) => {
    const path = indexPath(childPath(clusterPath, 'filters'), i);
    const name = stringField(filter, 'name');
    if (canonicalExtensionName(name) !== PROXY_PROTOCOL_UPSTREAM) throw new FieldError(childPath(path, 'name'), unknownExtension(name));
    typedConfig(filter, path, CONFIG_TYPES.proxyProtocol);
  });
}
