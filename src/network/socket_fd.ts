// The descriptor under a net.Socket, for the native calls that act on it (SO_ORIGINAL_DST,
// keepalive, the relay): Node keeps it on the socket's handle only.

import type * as net from 'node:net';

/** The socket's descriptor; null when it has no handle (closed, or not yet connected). */
export function socketFd(socket: net.Socket): number | null {
  const fd = (socket as unknown as { _handle: { fd?: number } | null })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : null;
}
