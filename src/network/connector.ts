// How an upstream connection is opened (undici's buildConnector; Envoy's transport socket
// factory): plain TCP, or TLS over it. A cluster has one connector per transport socket, chosen
// per endpoint (transport_socket_matches), and the connection pools and tcp_proxy open every
// connection through one, never through net.connect themselves.

import * as net from 'node:net';

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
}

export interface Connector {
  /** The transport socket's name in logs and stats: `raw_buffer` or `tls`. */
  readonly name: string;
  /**
   * The event after which the socket carries application data: 'connect' for plaintext,
   * 'secureConnect' once a TLS handshake (and the peer's verification) is done.
   */
  readonly readyEvent: 'connect' | 'secureConnect';
  /** Whether the connector can read through `onread` (see ConnectRequest). */
  readonly supportsOnread: boolean;
  /** Opens a connection; failures (refused, handshake, verification) end in 'close' before readyEvent. */
  connect(request: ConnectRequest): net.Socket;
}

/** `proxy.transport_sockets.raw_buffer`, and a cluster with no transport socket. */
export class PlainConnector implements Connector {
  readonly name = 'raw_buffer';
  readonly readyEvent = 'connect';
  readonly supportsOnread = true;

  connect(request: ConnectRequest): net.Socket {
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
}
