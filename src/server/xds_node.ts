// The node a management server sees in discovery requests (Envoy's LocalInfo node): the
// bootstrap's id, cluster, locality (after --service-* overrides) and metadata, and this build:
// its user agent and extensions.

import type { ConfigExtensions } from '../config/extension';
import { isJsonObject, type JsonObject, messageField } from '../config/json';
import type { Bootstrap } from '../config/model';
import { nodeLocality } from '../config/node_overrides';
import type { BuildInfo } from './build_info';
import { buildNodeFields } from './build_node_fields';

/** @param disabledExtensions --disable-extensions */
export function xdsNode(bootstrap: Bootstrap, build: BuildInfo, extensions: ConfigExtensions, disabledExtensions: readonly string[]): JsonObject {
  const { node } = bootstrap;
  const locality = nodeLocality(node);
  const source = isJsonObject(bootstrap.source) ? (messageField(bootstrap.source, 'node') ?? {}) : {};
  const metadata = messageField(source, 'metadata');
  return {
    id: node.id,
    cluster: node.cluster,
    ...(metadata !== undefined ? { metadata } : {}),
    ...(locality !== null ? { locality: { region: locality.region, zone: locality.zone, sub_zone: locality.subZone } } : {}),
    ...buildNodeFields(build, extensions, disabledExtensions),
  };
}
