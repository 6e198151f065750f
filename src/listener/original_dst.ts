// The `proxy.filters.listener.original_dst` listener filter (Envoy's OriginalDstFilter): a
// connection that iptables REDIRECT or DNAT sent here gets its local address set back to the
// destination it was made to (SO_ORIGINAL_DST), so that filter chain matching, access logs and an
// ORIGINAL_DST cluster's balancer all see that destination. A connection that was not
// redirected keeps its address and is not marked restored.

import type * as net from 'node:net';
import { getOriginalDst, NativeError } from '../native/addon';
import { socketFd } from '../network/socket_fd';

/** Restores `socket`'s local address to its original destination, when it had another one. */
export function restoreOriginalDestination(socket: net.Socket): void {
  const fd = socketFd(socket);
  if (fd === null) return;
  let destination;
  try {
    destination = getOriginalDst(fd);
  } catch (error) {
    // Envoy restores nothing when the socket option fails (a socket closed meanwhile).
    if (error instanceof NativeError) return;
    throw error;
  }
  if (destination === null) return;
  restoreLocalAddress(socket, destination.address, destination.port);
}

/**
 * Makes `socket` report `address`:`port` as its local address from now on, marked restored
 * (DownstreamAddresses.localAddressRestored). The TLS socket over a restored one gets it too.
 */
export function restoreLocalAddress(socket: net.Socket, address: string, port: number): void {
  Object.defineProperties(socket, {
    localAddress: { value: address, configurable: true },
    localPort: { value: port, configurable: true },
    localAddressRestored: { value: true, configurable: true },
  });
}
