// Validation of a whole decoded v3 bootstrap: the rules the protos cannot express (theirs are
// checked before, by proto_rules.ts). Pure. Each resource (admin, stats_config, every cluster,
// every listener, every stats sink, the tracer) is checked on its own and stops at its first
// problem, like Envoy; the problems of all resources are reported together, by field path.

import type { ConfigExtensions } from '../extension';
import { FieldErrorCollector } from '../errors';
import { JsonObject, messageField, messageList, stringField } from '../json';
import { validateAdmin } from './admin';
import { validateClusterManager } from './cluster_manager';
import { configSourceContext, hasTransportSocket, validateDynamicResources } from './config_sources';
import { validateClusters } from './clusters';
import { validateExtension } from './extensions';
import { validateLayeredRuntime } from './layered_runtime';
import { validateListeners } from './listeners';
import { validateStatsConfig } from './stats_config';
import { validateStatsSinks } from './stats_sinks';

/** @throws FieldError, or FieldErrors when several resources are invalid */
export function validateBootstrap(bootstrap: JsonObject, extensions: ConfigExtensions): void {
  const errors = new FieldErrorCollector();
  errors.run(() => validateAdmin(bootstrap));
  errors.run(() => validateStatsConfig(bootstrap));
  const sourceContext = configSourceContext(bootstrap);
  errors.run(() => validateLayeredRuntime(bootstrap, sourceContext));
  validateClusters(bootstrap, extensions, errors);
  const clusters = messageList(messageField(bootstrap, 'static_resources') ?? {}, 'clusters');
  const clusterNames = new Set(clusters.map((cluster) => stringField(cluster, 'name')));
  const plaintextClusters = new Set(clusters.filter((cluster) => !hasTransportSocket(cluster)).map((cluster) => stringField(cluster, 'name')));
  const context = { clusters: clusterNames, plaintextClusters, extensions };
  errors.run(() => validateClusterManager(bootstrap, clusterNames));
  errors.run(() => validateDynamicResources(bootstrap, sourceContext));
  validateListeners(bootstrap, context, errors);
  validateStatsSinks(bootstrap, context, errors);
  const tracer = messageField(messageField(bootstrap, 'tracing') ?? {}, 'http');
  if (tracer !== undefined) errors.run(() => validateExtension('proxy.tracers', tracer, 'tracing.http', context));
  errors.throwIfAny();
}
