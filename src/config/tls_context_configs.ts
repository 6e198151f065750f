// Every TLS context a bootstrap configures, with its field path and whose it is: clusters'
// (their transport socket, then each transport socket match's, through an upstream PROXY
// protocol socket too), then listeners' filter chains', in Envoy's creation order. Pure.

import { childPath } from './field_path';
import type { Bootstrap, ClusterConfig, CommonTlsContextConfig, SdsSecretConfig, SecretValue, TransportSocketConfig } from './model';

export interface TlsContextConfig {
  /** The common_tls_context's field path. */
  readonly path: string;
  readonly common: CommonTlsContextConfig;
  /** A cluster's contexts are clients, a listener's servers. */
  readonly side: 'client' | 'server';
  /** The cluster it connects for; null for a listener's. */
  readonly cluster: ClusterConfig | null;
  /** The listener it serves; null for a cluster's. */
  readonly listener: string | null;
}

export function tlsContextConfigs(bootstrap: Bootstrap): TlsContextConfig[] {
  const configs: TlsContextConfig[] = [];
  bootstrap.clusters.forEach((cluster, i) => configs.push(...clusterTlsContextConfigs(cluster, `static_resources.clusters[${i}]`)));
  bootstrap.listeners.forEach((listener, i) => {
    listener.filterChains.forEach((chain, j) => {
      if (chain.transportSocket?.kind !== 'tls') return;
      const path = `static_resources.listeners[${i}].filter_chains[${j}].transport_socket.typed_config.common_tls_context`;
      configs.push({ path, common: chain.transportSocket.context.common, side: 'server', cluster: null, listener: listener.name });
    });
  });
  return configs;
}

/** A cluster's TLS contexts, under `clusterPath` (a static cluster's, or a CDS resource's). */
export function clusterTlsContextConfigs(cluster: ClusterConfig, clusterPath: string): TlsContextConfig[] {
  const configs: TlsContextConfig[] = [];
  const visit = (socket: TransportSocketConfig | null, path: string): void => {
    if (socket?.kind === 'upstream_proxy_protocol') visit(socket.transportSocket, `${path}.typed_config.transport_socket`);
    if (socket?.kind !== 'tls') return;
    configs.push({ path: `${path}.typed_config.common_tls_context`, common: socket.context.common, side: 'client', cluster, listener: null });
  };
  visit(cluster.transportSocket, childPath(clusterPath, 'transport_socket'));
  cluster.transportSocketMatches.forEach((match, j) => visit(match.transportSocket, childPath(clusterPath, `transport_socket_matches[${j}].transport_socket`)));
  return configs;
}

/** A secret a TLS context names, with the kind it takes and the SdsSecretConfig's path under the context's. */
export interface SecretReference {
  readonly config: SdsSecretConfig;
  readonly kind: SecretValue['kind'];
  readonly path: string;
}

/** The secrets a context takes from SDS or static_resources. */
export function secretReferences(common: CommonTlsContextConfig): SecretReference[] {
  // tls_certificates wins over tls_certificate_sds_secret_configs, as in Envoy.
  const certificates = common.tlsCertificates.length > 0 ? [] : common.tlsCertificateSdsSecretConfigs;
  const references: SecretReference[] = certificates.map((config, i) => ({ config, kind: 'tls_certificate', path: `tls_certificate_sds_secret_configs[${i}]` }));
  const validation = common.validationContextSdsSecretConfig;
  if (validation !== null) {
    // The one-of: a validation context beside it is a combined one's default.
    const path = common.validationContext === null ? 'validation_context_sds_secret_config' : 'combined_validation_context.validation_context_sds_secret_config';
    references.push({ config: validation, kind: 'validation_context', path });
  }
  return references;
}
