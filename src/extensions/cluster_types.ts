// The supervisor's cluster types: the factories of the registry's cluster extensions, by the key
// clusterTypeName gives a cluster (its discovery type, or its custom type's name).

import type { ClusterType } from '../upstream/cluster_discovery';
import type { BuiltinExtensions } from './builtin_extensions';

export function clusterTypes(extensions: BuiltinExtensions): ReadonlyMap<string, ClusterType> {
  return new Map(extensions.of('proxy.clusters').map((type) => [type.factory.name, type.factory]));
}
