// The DownstreamConnectionInfo of an accepted socket, made once per connection: its addresses
// as log lines print them (the local one after original_dst) and, over TLS, the session's facts,
// which are read only when asked for.

import type * as net from 'node:net';
import { TLSSocket } from 'node:tls';
import { TlsSocketConnectionInfo } from '../tls/ssl_connection_info';
import { addressString } from '../network/socket_address';
import type { DownstreamConnectionInfo } from './stream_info';

/** `ip:port`, `[ip]:port` for IPv6; '' when the socket has no address (already closed). */
export function socketAddressString(address: string | undefined, port: number | undefined): string {
  return address === undefined || port === undefined ? '' : addressString({ address, port });
}

export function downstreamConnectionInfo(socket: net.Socket, id: number): DownstreamConnectionInfo {
  const tls = socket instanceof TLSSocket ? socket : null;
  const serverName = tls?.servername;
  return {
    id,
    localAddress: socketAddressString(socket.localAddress, socket.localPort),
    directRemoteAddress: socketAddressString(socket.remoteAddress, socket.remotePort),
    requestedServerName: typeof serverName === 'string' && serverName !== '' ? serverName : null,
    ssl: tls === null ? null : new TlsSocketConnectionInfo(tls),
  };
}
