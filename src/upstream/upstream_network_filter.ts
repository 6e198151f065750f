// The upstream network filter chain of a cluster (Cluster.filters): filters that act on every
// connection to the cluster's hosts, HTTP pool and tcp_proxy alike, in configuration order.

import type * as net from 'node:net';
import type { UpstreamNetworkFilterConfig } from '../config/model';
import { ProxyProtocolUpstreamFilter } from '../filters/upstream_network/proxy_protocol';

/** The downstream connection an upstream connection serves; a net.Socket is one. */
export interface DownstreamAddresses {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
  readonly localAddress?: string | undefined;
  readonly localPort?: number | undefined;
  /** The original_dst listener filter set the local address to the connection's original destination. */
  readonly localAddressRestored?: boolean;
}

export interface UpstreamNetworkFilter {
  /**
   * Whether each connection depends on the downstream connection it was opened for; an HTTP
   * pool then keeps separate connections per downstream connection.
   */
  readonly downstreamSpecific: boolean;
  /** The connection is up: bytes written here precede every byte of its traffic. */
  onUpstreamConnected(socket: net.Socket, downstream: DownstreamAddresses): void;
}

export function buildUpstreamFilters(configs: readonly UpstreamNetworkFilterConfig[]): UpstreamNetworkFilter[] {
  // One kind so far; a second one turns this into a switch on `name`.
  return configs.map((config) => new ProxyProtocolUpstreamFilter(config.version));
}
