// proxy.filters.network.upstream.proxy_protocol: each upstream connection starts with a PROXY
// protocol header carrying the downstream connection's addresses (as Envoy's upstream
// proxy_protocol transport socket does), for upstreams behind HAProxy-style `accept-proxy`.

import type * as net from 'node:net';
import type { DownstreamAddresses, UpstreamNetworkFilter } from '../../upstream/upstream_network_filter';
import { type ProxiedAddresses, proxyProtocolV1, proxyProtocolV2 } from './proxy_protocol_header';

export class ProxyProtocolUpstreamFilter implements UpstreamNetworkFilter {
  /** The header names one client: a connection cannot serve another downstream (Envoy hashes pools on it). */
  readonly downstreamSpecific = true;
  private readonly encode: (addresses: ProxiedAddresses) => Buffer;

  constructor(version: 'V1' | 'V2') {
    this.encode = version === 'V1' ? proxyProtocolV1 : proxyProtocolV2;
  }

  onUpstreamConnected(socket: net.Socket, downstream: DownstreamAddresses): void {
    // A downstream that is not IP (a Unix socket) gets UNKNOWN (v1) or LOCAL (v2).
    socket.write(
      this.encode({
        sourceAddress: downstream.remoteAddress,
        sourcePort: downstream.remotePort,
        destinationAddress: downstream.localAddress,
        destinationPort: downstream.localPort,
      }),
    );
  }
}
