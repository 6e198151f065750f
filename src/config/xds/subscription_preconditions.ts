// What Envoy requires before it subscribes to xDS resources, checked when the configuration is
// loaded (in --mode validate too, as Envoy's validation server creates its subscriptions): a node
// with an identity, which a management server tells nodes apart by, and for a file source a file
// that exists, so that a mistyped path fails at once rather than serving nothing.

import * as fs from 'node:fs';
import { FieldError, FieldErrorCollector } from '../errors';
import { childPath, indexPath } from '../field_path';
import type { Bootstrap, NodeInfo } from '../model';
import { requireNodeIdentity } from '../node_overrides';
import type { ConfigSourceConfig } from '../config_source';
import { rdsSourcesOf } from '../rds_sources';
import { secretReferences, tlsContextConfigs } from '../tls_context_configs';
import { CLUSTER_RESOURCE, LISTENER_RESOURCE, resourceTypeUrl, type ResourceType, RUNTIME_RESOURCE } from './resource_types';

/**
 * The subscriptions the bootstrap starts: CDS, LDS, each RTDS layer's, the EDS of each static cluster
 * and the SDS of each TLS context (for which, unlike Envoy, this build does not require the
 * node's identity), and each connection manager's RDS.
 * @param node the node after --service-node and --service-cluster
 * @throws FieldError, or FieldErrors when several sources fail
 */
export function checkBootstrapSubscriptions(bootstrap: Bootstrap, node: NodeInfo): void {
  const errors = new FieldErrorCollector();
  const cds = bootstrap.dynamicResources.cdsConfig;
  if (cds !== null) errors.run(() => checkSubscriptionPreconditions(node, cds, CLUSTER_RESOURCE, 'dynamic_resources.cds_config'));
  const lds = bootstrap.dynamicResources.ldsConfig;
  if (lds !== null) errors.run(() => checkSubscriptionPreconditions(node, lds, LISTENER_RESOURCE, 'dynamic_resources.lds_config'));
  bootstrap.runtimeLayers.forEach((layer, i) => {
    if (layer.kind !== 'rtds') return;
    errors.run(() => checkSubscriptionPreconditions(node, layer.source, RUNTIME_RESOURCE, `${indexPath('layered_runtime.layers', i)}.rtds_layer.rtds_config`));
  });
  bootstrap.clusters.forEach((cluster, i) => {
    const eds = cluster.edsClusterConfig;
    if (eds === null) return;
    errors.run(() => checkFileSourceExists(eds.edsConfig, `${indexPath('static_resources.clusters', i)}.eds_cluster_config.eds_config`));
  });
  // Envoy's RDS subscription checks the node first, under the name `rds`.
  for (const { rds, path } of rdsSourcesOf(bootstrap)) {
    errors.run(() => {
      requireNodeIdentity(node, 'rds', path);
      checkFileSourceExists(rds.configSource, childPath(path, 'config_source'));
    });
  }
  for (const context of tlsContextConfigs(bootstrap)) {
    for (const { config, path } of secretReferences(context.common)) {
      if (config.sdsConfig !== null) errors.run(() => checkFileSourceExists(config.sdsConfig!, `${context.path}.${path}.sds_config`));
    }
  }
  errors.throwIfAny();
}

/**
 * @param node the node after --service-node and --service-cluster
 * @param path the config source's field path, e.g. `dynamic_resources.cds_config`
 * @throws FieldError with Envoy's message
 */
function checkSubscriptionPreconditions(node: NodeInfo, source: ConfigSourceConfig, type: ResourceType, path: string): void {
  requireNodeIdentity(node, resourceTypeUrl(type, source.resourceApiVersion), path);
  checkFileSourceExists(source, path);
}

/**
 * Envoy's checkFilesystemSubscriptionBackingPath, for every file source (CDS, EDS).
 * @param path the config source's field path, e.g. `static_resources.clusters[0].eds_cluster_config.eds_config`
 * @throws FieldError at `<path>.path` with Envoy's message
 */
export function checkFileSourceExists(source: ConfigSourceConfig, path: string): void {
  if (source.kind === 'path' && !fs.existsSync(source.path)) {
    throw new FieldError(childPath(path, 'path'), `paths must refer to an existing path in the system: '${source.path}' does not exist`);
  }
}
