// `proxy.transport_sockets.upstream_proxy_protocol` (Envoy's UpstreamProxyProtocolSocket): the
// connection starts with a PROXY protocol header naming the downstream connection's addresses,
// then carries the wrapped transport socket (plaintext, or TLS whose handshake follows the
// header), for upstreams behind HAProxy-style `accept-proxy`.

import type * as net from 'node:net';
import { type ConnectRequest, openTcp, type TcpOpener } from './connector';
import { type ProxiedAddresses, proxyProtocolV1, proxyProtocolV2 } from './proxy_protocol_header';

/** The opener of the wrapped transport socket's TCP connection, with the header written first. */
export function upstreamProxyProtocol(version: 'V1' | 'V2', tcp: TcpOpener = openTcp): TcpOpener {
  const encode = version === 'V1' ? proxyProtocolV1 : proxyProtocolV2;
  return (request: ConnectRequest) => {
    const socket = tcp(request);
    // Registered before the wrapped socket's own listeners (TLS starts its handshake on
    // 'connect'), so the header is the first byte on the wire.
    socket.once('connect', () => socket.write(encode(proxiedAddresses(version, request, socket))));
    return socket;
  };
}

/**
 * The downstream connection's source and destination. Without one (a health check), Envoy's V1
 * header names the upstream connection itself and its V2 header is a LOCAL one.
 */
function proxiedAddresses(version: 'V1' | 'V2', request: ConnectRequest, socket: net.Socket): ProxiedAddresses {
  const downstream = request.downstream;
  if (downstream !== undefined) {
    return {
      sourceAddress: downstream.remoteAddress,
      sourcePort: downstream.remotePort,
      destinationAddress: downstream.localAddress,
      destinationPort: downstream.localPort,
    };
  }
  if (version === 'V2') return NO_ADDRESSES;
  return { sourceAddress: socket.localAddress, sourcePort: socket.localPort, destinationAddress: socket.remoteAddress, destinationPort: socket.remotePort };
}

/** Encoded as UNKNOWN (V1) or LOCAL (V2). */
const NO_ADDRESSES: ProxiedAddresses = { sourceAddress: undefined, sourcePort: undefined, destinationAddress: undefined, destinationPort: undefined };
