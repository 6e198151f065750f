// The terminal network filter of a filter chain, as the listener sees it: something that
// takes over each accepted connection.

import type * as net from 'node:net';

export interface NetworkFilterFactory {
  /** Takes ownership of `socket`, connection `id` in log lines; the filter closes it when done. */
  onNewConnection(socket: net.Socket, id: number): void;
  /** The drain time is over: close the connections that carry nothing right now. */
  closeIdleConnections(): void;
}
