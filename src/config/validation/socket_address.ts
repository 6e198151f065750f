// core.v3.Address as the proxy can use it: a socket address with an IP (or, for DNS clusters, a
// hostname) and a TCP port, or a UDP one where the proxy sends datagrams (a statsd sink).

import { isIP } from 'node:net';
import { FieldError } from '../errors';
import { childPath } from '../field_path';
import { JsonObject, messageField, stringField } from '../json';

export type HostRule = 'ip' | 'ip_or_hostname';

/**
 * @param address the core.v3.Address at `path`, undefined when unset
 * @param transport `datagram` where Envoy sends UDP datagrams to the address whatever its `protocol` says
 */
export function validateSocketAddress(address: JsonObject | undefined, path: string, hostRule: HostRule, transport: 'stream' | 'datagram' = 'stream'): void {
  if (address === undefined) throw new FieldError(path, 'missing required field');
  const socket = messageField(address, 'socket_address');
  if (socket === undefined) {
    const kind = Object.keys(address)[0];
    if (kind === undefined) throw new FieldError(childPath(path, 'socket_address'), 'missing required field');
    throw new FieldError(childPath(path, kind), `${kind} addresses are not supported; use socket_address`);
  }
  const socketPath = childPath(path, 'socket_address');
  if (transport === 'stream' && stringField(socket, 'protocol') === 'UDP') {
    throw new FieldError(childPath(socketPath, 'protocol'), 'UDP is not supported');
  }
  // The protos require an address and keep port_value within 65535 (proto_rules.ts).
  const host = stringField(socket, 'address');
  if (hostRule === 'ip' && isIP(host) === 0) {
    throw new FieldError(childPath(socketPath, 'address'), `malformed IP address: ${host}`);
  }
  if (socket['named_port'] !== undefined) {
    throw new FieldError(childPath(socketPath, 'named_port'), 'named ports are not supported; use port_value');
  }
}
