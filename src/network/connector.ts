// How an upstream connection is opened (undici's buildConnector; Envoy's transport socket
// factory): plain TCP, or TLS over it. A cluster has one connector per transport socket, chosen
// per endpoint (transport_socket_matches), and the connection pools and tcp_proxy open every
// connection through one, never through net.connect themselves.

import * as net from 'node:net';
import type { DownstreamAddresses } from './downstream_addresses';

export interface ConnectRequest {
  readonly host: string;
  readonly port: number;
  /** upstream_bind_config; undefined lets the kernel choose. */
  readonly localAddress?: string;
  readonly localPort?: number;
  readonly allowHalfOpen: boolean;
  /**
   * Node's `onread`: reads land in a shared buffer instead of a new one each. Only a plaintext
   * connector can honor it; a TLS one ignores it and emits 'data'.
   */
  readonly onread?: net.OnReadOpts;
  /** Protocols to offer by ALPN instead of the context's (an HTTP/2 pool asks for `h2`). */
  readonly alpn?: readonly string[];
  /** Per-request settings of the transport socket (auto_sni, auto_san_validation); none: the context's. */
  readonly transportSocketOptions?: TransportSocketOptions;
  /** The downstream connection this one serves; none for the proxy's own (health checks). */
  readonly downstream?: DownstreamAddresses;
}

/**
 * Envoy's TransportSocketOptions: what a request asks of the transport socket beyond its
 * configuration. Connections made with different options are never shared (see Cluster.httpPool).
 */
export interface TransportSocketOptions {
  /** The SNI to send instead of the context's `sni`; null keeps it. */
  readonly serverName: string | null;
  /** Names the peer's certificate must hold as a SAN, beyond the context's matchers. */
  readonly subjectAltNames: readonly string[];
  /** Equal for equal options: the key of the connections made with them. */
  readonly key: string;
}

/** Emitted by a connector's socket when its own checks of a new connection passed. */
export const TRANSPORT_READY = 'transportReady';

export interface Connector {
  /** The transport socket's name in logs and stats: `raw_buffer` or `tls`. */
  readonly name: string;
  /**
   * The event after which the socket carries application data: 'connect' for plaintext,
   * TRANSPORT_READY once a TLS handshake is done and the peer passed the context's checks.
   */
  readonly readyEvent: 'connect' | typeof TRANSPORT_READY;
  /** Whether the connector can read through `onread` (see ConnectRequest). */
  readonly supportsOnread: boolean;
  /** Opens a connection; failures (refused, handshake, verification) end in 'close' before readyEvent. */
  connect(request: ConnectRequest): net.Socket;
}

/**
 * Opens the TCP connection a transport socket runs over. A wrapping transport socket (the
 * upstream PROXY protocol) is one of these around another: its bytes go first on the wire.
 */
export type TcpOpener = (request: ConnectRequest) => net.Socket;

/** A plain TCP connection, reading through `onread` when the request asks. */
export function openTcp(request: ConnectRequest): net.Socket {
  return net.connect({
    host: request.host,
    port: request.port,
    noDelay: true,
    allowHalfOpen: request.allowHalfOpen,
    localAddress: request.localAddress,
    localPort: request.localPort,
    onread: request.onread,
  });
}

/** `proxy.transport_sockets.raw_buffer`, and a cluster with no transport socket. */
export class PlainConnector implements Connector {
  readonly name = 'raw_buffer';
  readonly readyEvent = 'connect';
  readonly supportsOnread = true;

  constructor(private readonly tcp: TcpOpener = openTcp) {}

  connect(request: ConnectRequest): net.Socket {
    return this.tcp(request);
  }
}
