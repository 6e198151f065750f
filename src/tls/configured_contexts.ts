// Every TLS context a bootstrap configures, loaded as the supervisor keeps them for GET /certs
// and server.days_until_first_cert_expiring: clusters' (their transport socket, then each
// transport socket match's), then listeners' filter chains', in Envoy's creation order.

import { atField } from '../config/errors';
import type { Bootstrap, CommonTlsContextConfig } from '../config/model';
import { TlsContext } from './tls_context';
import type { TlsSide } from './tls_versions';

/** @throws FieldError at the common_tls_context that does not load */
export function configuredTlsContexts(bootstrap: Bootstrap): TlsContext[] {
  const configs: { path: string; common: CommonTlsContextConfig; side: TlsSide }[] = [];
  bootstrap.clusters.forEach((cluster, i) => {
    const clusterPath = `static_resources.clusters[${i}]`;
    if (cluster.transportSocket?.kind === 'tls') {
      configs.push({ path: `${clusterPath}.transport_socket.typed_config.common_tls_context`, common: cluster.transportSocket.context.common, side: 'client' });
    }
    cluster.transportSocketMatches.forEach((match, j) => {
      if (match.transportSocket?.kind === 'tls') {
        const path = `${clusterPath}.transport_socket_matches[${j}].transport_socket.typed_config.common_tls_context`;
        configs.push({ path, common: match.transportSocket.context.common, side: 'client' });
      }
    });
  });
  bootstrap.listeners.forEach((listener, i) => {
    listener.filterChains.forEach((chain, j) => {
      if (chain.transportSocket?.kind === 'tls') {
        const path = `static_resources.listeners[${i}].filter_chains[${j}].transport_socket.typed_config.common_tls_context`;
        configs.push({ path, common: chain.transportSocket.context.common, side: 'server' });
      }
    });
  });
  return configs.map(({ path, common, side }) => atField(path, () => new TlsContext(common, side)));
}
