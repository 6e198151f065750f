// How a cluster opens connections to each of its hosts: one connector per transport socket it
// configures (transport_socket_matches entries, then its own transport_socket), picked per host
// by the host's `proxy.transport_socket_match` metadata. TLS contexts are loaded once per
// cluster, not per host; their `ssl.*` and `client_ssl_socket_factory.*` statistics are the
// cluster's, as in Envoy. An upstream PROXY protocol socket is the connector of the socket it
// wraps, its header written first.

import { atField } from '../../config/errors';
import type { ClusterConfig, TransportSocketConfig } from '../../config/model';
import type { Logger } from '../../log/logger_api';
import { type Connector, openTcp, PlainConnector, type TcpOpener } from '../../network/connector';
import { upstreamProxyProtocol } from '../../network/upstream_proxy_protocol';
import type { StatGroup } from '../../stats/name_table';
import { StatKind } from '../../shared_memory/region_layout';
import type { Counter, Scope } from '../../stats/stats';
import type { SecretSource } from '../../tls/secret_store';
import { CLIENT_SSL_SOCKET_FACTORY_STAT_GROUP, SslSocketFactoryStats } from '../../tls/ssl_socket_factory_stats';
import { SSL_STAT_GROUP, SslStats } from '../../tls/ssl_stats';
import type { TlsContext } from '../../tls/tls_context';
import { TlsConnector } from '../../tls/tls_connector';
import { TRANSPORT_SOCKET_MATCH_NAMESPACE, transportSocketMatchIndex } from './transport_socket_match';

/** The name Envoy gives the cluster's own transport socket in the match statistics. */
const DEFAULT_MATCH_NAME = 'default';

/** What the match reads of a host: a worker's Host, or the member a health check probes. */
interface EndpointMetadata {
  readonly metadata: Readonly<Record<string, unknown>>;
}

export class ClusterTransportSockets {
  private readonly matches: readonly Readonly<Record<string, unknown>>[];
  /** One per transport_socket_matches entry, in order; then the cluster's own. */
  private readonly connectors: readonly Connector[];
  private readonly names: readonly string[];
  /** `<match name>.total_match_count` by connector index, made on first use. */
  private readonly matchCounts: (Counter | undefined)[] = [];

  /**
   * @param scope the cluster's `cluster.<stat_name>` scope
   * @param secrets where the secrets its TLS contexts name are found
   * @throws FieldError, relative to the cluster, at the transport socket that cannot be built
   */
  constructor(
    config: ClusterConfig,
    private readonly scope: Scope,
    log: Logger,
    secrets: SecretSource,
  ) {
    this.matches = config.transportSocketMatches.map((entry) => entry.match);
    this.names = [...config.transportSocketMatches.map((entry) => entry.name), DEFAULT_MATCH_NAME];
    let ssl: { readonly context: SslStats; readonly factory: SslSocketFactoryStats } | null = null;
    const plain = new PlainConnector();
    const build = (socket: TransportSocketConfig | null, path: string, tcp: TcpOpener = openTcp): Connector => {
      if (socket === null || socket.kind === 'raw_buffer') return tcp === openTcp ? plain : new PlainConnector(tcp);
      if (socket.kind === 'upstream_proxy_protocol') {
        return build(socket.transportSocket, `${path}.typed_config.transport_socket`, upstreamProxyProtocol(socket.version, tcp));
      }
      ssl ??= { context: new SslStats(scope), factory: new SslSocketFactoryStats(scope, 'client') };
      const stats = ssl;
      return atField(`${path}.typed_config`, () => new TlsConnector(socket.context, stats.context, stats.factory, secrets, log, tcp));
    };
    this.connectors = [
      ...config.transportSocketMatches.map((entry, i) => build(entry.transportSocket, `transport_socket_matches[${i}].transport_socket`)),
      build(config.transportSocket, 'transport_socket'),
    ];
  }

  /** The first transport_socket_matches entry `host` matches, else the cluster's transport socket. */
  connectorFor(host: EndpointMetadata): Connector {
    return this.connectors[this.indexFor(host.metadata)];
  }

  /**
   * The connector a health check with transport_socket_match_criteria uses for every host: the
   * criteria are matched as if they were the host's match metadata, as in Envoy.
   */
  connectorForCriteria(criteria: Readonly<Record<string, unknown>>): Connector {
    return this.connectors[this.indexFor({ [TRANSPORT_SOCKET_MATCH_NAMESPACE]: criteria })];
  }

  /** Envoy counts a match once per host made: `<match name>.total_match_count` (`default.` for the cluster's own). */
  countMatch(host: EndpointMetadata): void {
    const index = this.indexFor(host.metadata);
    (this.matchCounts[index] ??= this.scope.counter(`${this.names[index]}.total_match_count`)).inc();
  }

  /** The TLS contexts of the cluster's connectors, for the certificate watcher. */
  tlsContexts(): TlsContext[] {
    return [...new Set(this.connectors.flatMap((c) => (c instanceof TlsConnector ? [c.context] : [])))];
  }

  private indexFor(metadata: Readonly<Record<string, unknown>>): number {
    if (this.matches.length === 0) return 0;
    const index = transportSocketMatchIndex(this.matches, metadata);
    return index === -1 ? this.matches.length : index;
  }
}

/** The match counters of `config`'s cluster and, when it has TLS, its `ssl.*`, under its `cluster.<stat_name>.`. */
export function transportSocketStatGroups(config: ClusterConfig): StatGroup[] {
  const matches = [...config.transportSocketMatches.map((entry) => entry.name), DEFAULT_MATCH_NAME];
  const groups: StatGroup[] = [{ scope: '', names: matches.map((name) => `${name}.total_match_count`), kind: StatKind.Counter, flags: 0 }];
  if (clusterTransportSockets(config).some((socket) => innermost(socket)?.kind === 'tls')) groups.push(SSL_STAT_GROUP, CLIENT_SSL_SOCKET_FACTORY_STAT_GROUP);
  return groups;
}

/**
 * Whether some connection of `config`'s cluster names its downstream connection (an upstream
 * PROXY protocol header): such a connection serves that downstream connection only.
 */
export function hasDownstreamSpecificConnections(config: ClusterConfig): boolean {
  return clusterTransportSockets(config).some((socket) => socket?.kind === 'upstream_proxy_protocol');
}

function clusterTransportSockets(config: ClusterConfig): (TransportSocketConfig | null)[] {
  return [config.transportSocket, ...config.transportSocketMatches.map((entry) => entry.transportSocket)];
}

/** The socket that carries the traffic: the one a PROXY protocol socket wraps, at any depth. */
function innermost(socket: TransportSocketConfig | null): TransportSocketConfig | null {
  return socket?.kind === 'upstream_proxy_protocol' ? innermost(socket.transportSocket) : socket;
}
