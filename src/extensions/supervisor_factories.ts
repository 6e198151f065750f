// What the supervisor runs from the registry: the cluster types (their discovery), by the key
// clusterTypeName gives a cluster (its discovery type, or its custom type's name), and the kinds
// of active health check.

import type { ClusterType } from '../upstream/supervisor/cluster_discovery';
import type { HealthCheckerFactory } from '../upstream/supervisor/health_check/health_checkers';
import type { BuiltinExtensions } from './builtin_extensions';

export function clusterTypes(extensions: BuiltinExtensions): ReadonlyMap<string, ClusterType> {
  return new Map(extensions.of('proxy.clusters').map((type) => [type.factory.name, type.factory]));
}

export function healthCheckers(extensions: BuiltinExtensions): readonly HealthCheckerFactory[] {
  return extensions.of('proxy.health_checkers').map((checker) => checker.factory);
}
