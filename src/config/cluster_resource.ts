// One Cluster resource of a CDS update through the stages a static cluster goes through in
// load.ts (decoded v3 JSON in, the model out), so that a cluster is refused or accepted alike
// from either place, with the same reasons at the same paths below the resource's own.

import { checkClusterCapabilities } from './capabilities';
import type { ConfigExtensions } from './extension';
import { atField } from './errors';
import { canonicalizeClusterExtensionNames } from './extension_sites';
import type { JsonObject } from './json';
import type { ClusterConfig } from './model';
import { cluster as clusterModel } from './model_builder';
import type { ProtoSchema } from './schema';
import { validateCluster } from './validation/clusters';
import { checkClusterDisabledExtensions } from './validation/disabled_extensions';
import { checkMessageProtoRules } from './validation/proto_rules';
import { checkFileSourceExists } from './xds/subscription_preconditions';

const CLUSTER_TYPE = 'envoy.config.cluster.v3.Cluster';

export interface LoadedCluster {
  readonly config: ClusterConfig;
  /** The resource with extension names canonicalized: what /config_dump shows and updates are compared by. */
  readonly source: JsonObject;
}

/**
 * @param resource decoded v3 JSON (the resource decoder's output)
 * @param path where the resource sits in its update, e.g. `resources[3]`
 * @param disabledExtensions --disable-extensions, resolved (keys of ExtensionRegistry.resolveDisabled)
 * @param extensions the registry the cluster's extensions are found in
 * @throws FieldError (FieldErrors for several unsupported fields) at a path below `path`
 */
export function loadClusterResource(
  schema: ProtoSchema,
  resource: JsonObject,
  path: string,
  disabledExtensions: ReadonlySet<string>,
  extensions: ConfigExtensions,
): LoadedCluster {
  const source = canonicalizeClusterExtensionNames(resource, extensions);
  checkClusterDisabledExtensions(source, path, disabledExtensions, extensions);
  // The order of load.ts: the protos' rules, then the validators that rely on them, then what this build runs.
  checkMessageProtoRules(schema, CLUSTER_TYPE, source, path);
  validateCluster(source, path, extensions);
  checkClusterCapabilities(source, path, extensions);
  const config = atField(path, () => clusterModel(source, extensions));
  // Envoy creates the cluster's EDS subscription with it, refusing a file that is not there.
  const eds = config.edsClusterConfig;
  if (eds !== null) atField(path, () => checkFileSourceExists(eds.edsConfig, 'eds_cluster_config.eds_config'));
  return { config, source };
}
