// Validation of a whole decoded v3 bootstrap: the rules the protos cannot express (theirs are
// checked before, by proto_rules.ts). Pure. Each resource (admin, stats_config, every cluster,
// every listener, every stats sink, the tracer, the overload manager) is checked on its own and stops at its first
// problem, like Envoy; the problems of all resources are reported together, by field path.

import type { ConfigExtensions, ValidationContext } from '../extension';
import { FieldErrorCollector } from '../errors';
import { JsonObject, messageField, messageList, stringField } from '../json';
import { validateAdmin } from './admin';
import { validateClusterManager } from './cluster_manager';
import { configSourceContext, hasTransportSocket, validateDynamicResources } from './config_sources';
import { validateClusters } from './clusters';
import { validateExtension } from './extensions';
import { validateLayeredRuntime } from './layered_runtime';
import { validateListeners } from './listeners';
import { validateSecrets } from './secrets';
import { validateStatsConfig } from './stats_config';
import { validateOverloadManager } from './overload_manager';
import { validateStatsSinks } from './stats_sinks';

/** @throws FieldError, or FieldErrors when several resources are invalid */
const NO_CLUSTERS: ReadonlySet<string> = new Set();

/** @param dynamicClusters clusters the cluster manager has beyond the bootstrap's (CDS's, for an LDS listener) */
export function validateBootstrap(bootstrap: JsonObject, extensions: ConfigExtensions, dynamicClusters: ReadonlySet<string> = NO_CLUSTERS): void {
  const errors = new FieldErrorCollector();
  const context = bootstrapValidationContext(bootstrap, extensions, dynamicClusters);
  errors.run(() => validateAdmin(bootstrap, context));
  errors.run(() => validateStatsConfig(bootstrap));
  errors.run(() => validateLayeredRuntime(bootstrap, context.configSources));
  validateClusters(bootstrap, extensions, errors);
  errors.run(() => validateClusterManager(bootstrap, context.clusters));
  errors.run(() => validateDynamicResources(bootstrap, context.configSources));
  validateListeners(bootstrap, context, errors);
  validateSecrets(bootstrap, extensions, errors);
  validateStatsSinks(bootstrap, context, errors);
  validateOverloadManager(bootstrap, context, errors);
  const tracer = messageField(messageField(bootstrap, 'tracing') ?? {}, 'http');
  if (tracer !== undefined) errors.run(() => validateExtension('proxy.tracers', tracer, 'tracing.http', context));
  errors.throwIfAny();
}

/** What the bootstrap's extensions are checked against (and an RDS resource, with the clusters of the moment). */
export function bootstrapValidationContext(bootstrap: JsonObject, extensions: ConfigExtensions, dynamicClusters: ReadonlySet<string> = NO_CLUSTERS): ValidationContext {
  const clusters = messageList(messageField(bootstrap, 'static_resources') ?? {}, 'clusters');
  return {
    clusters: new Set([...clusters.map((cluster) => stringField(cluster, 'name')), ...dynamicClusters]),
    plaintextClusters: new Set(clusters.filter((cluster) => !hasTransportSocket(cluster)).map((cluster) => stringField(cluster, 'name'))),
    extensions,
    configSources: configSourceContext(bootstrap),
  };
}
