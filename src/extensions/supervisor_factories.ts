// What the supervisor runs from the registry: the cluster types (their discovery), by the key
// clusterTypeName gives a cluster (its discovery type, or its custom type's name), the kinds
// of active health check, and the bootstrap's stats sinks.

import type { StatsSinkConfig } from '../config/model';
import type { StatsSink, StatsSinkContext } from '../stats/sinks/stats_sink';
import type { ClusterType } from '../upstream/supervisor/cluster_discovery';
import type { HealthCheckerFactory } from '../upstream/supervisor/health_check/health_checkers';
import type { BuiltinExtensions } from './builtin_extensions';

export function clusterTypes(extensions: BuiltinExtensions): ReadonlyMap<string, ClusterType> {
  return new Map(extensions.of('proxy.clusters').map((type) => [type.factory.name, type.factory]));
}

export function healthCheckers(extensions: BuiltinExtensions): readonly HealthCheckerFactory[] {
  return extensions.of('proxy.health_checkers').map((checker) => checker.factory);
}

/** The sinks of the bootstrap's stats_sinks, each made by its descriptor's factory. */
export function statsSinks(extensions: BuiltinExtensions, configs: readonly StatsSinkConfig[], context: StatsSinkContext): StatsSink[] {
  return configs.map((config) => {
    const descriptor = extensions.get('proxy.stats_sinks', config.name);
    if (descriptor === undefined) throw new Error(`no stats sink is named '${config.name}': validation admits registered ones only`);
    return descriptor.factory(config, context);
  });
}
