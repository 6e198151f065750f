// GET /listeners: `<name>::<address>` per listener, or Envoy's JSON with ?format=json.
// The addresses are the bound ones, so a listener configured on port 0 shows its real port.

import type { SocketAddress } from '../config/model';
import { addressString } from '../network/socket_address';
import { AdminHandler, JSON_TYPE } from './admin_server';

export interface BoundListener {
  readonly name: string;
  readonly address: SocketAddress;
}

export function renderListenersText(listeners: readonly BoundListener[]): string {
  return listeners.map((l) => `${l.name}::${addressString(l.address)}\n`).join('');
}

export function renderListenersJson(listeners: readonly BoundListener[]): string {
  const statuses = listeners.map((l) => ({
    name: l.name,
    local_address: { socket_address: { address: l.address.address, port_value: l.address.port } },
  }));
  return JSON.stringify({ listener_statuses: statuses }, null, 1) + '\n';
}

export function listenersHandler(listeners: () => readonly BoundListener[]): AdminHandler {
  return {
    path: '/listeners',
    help: 'print listener info',
    mutatesState: false,
    decodeQuery: false,
    handle: (req) =>
      req.query.get('format') === 'json'
        ? { status: 200, body: renderListenersJson(listeners()), contentType: JSON_TYPE }
        : { status: 200, body: renderListenersText(listeners()) },
  };
}
