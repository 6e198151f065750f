// A cluster's transport sockets (transport_socket and each transport_socket_matches entry's):
// plaintext, TLS, or Envoy's upstream PROXY protocol socket wrapping one of them, each with a
// typed_config of its type. What an UpstreamTlsContext holds is checked when it is built.

import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageField, messageList, stringField } from '../json';
import { CONFIG_TYPES, RAW_BUFFER_TRANSPORT_SOCKET, TLS_TRANSPORT_SOCKET, UPSTREAM_PROXY_PROTOCOL_TRANSPORT_SOCKET } from '../names';
import { typedConfig, unknownExtension } from './extensions';

export function validateUpstreamTransportSockets(cluster: JsonObject, clusterPath: string): void {
  const socket = messageField(cluster, 'transport_socket');
  if (socket !== undefined) validateTransportSocket(socket, childPath(clusterPath, 'transport_socket'));
  messageList(cluster, 'transport_socket_matches').forEach((match, i) => {
    const matchSocket = messageField(match, 'transport_socket');
    const matchPath = indexPath(childPath(clusterPath, 'transport_socket_matches'), i);
    if (matchSocket !== undefined) validateTransportSocket(matchSocket, childPath(matchPath, 'transport_socket'));
  });
}

function validateTransportSocket(socket: JsonObject, path: string): void {
  const name = stringField(socket, 'name');
  if (name === RAW_BUFFER_TRANSPORT_SOCKET) typedConfig(socket, path, CONFIG_TYPES.rawBuffer);
  else if (name === TLS_TRANSPORT_SOCKET) typedConfig(socket, path, CONFIG_TYPES.upstreamTlsContext);
  else if (name === UPSTREAM_PROXY_PROTOCOL_TRANSPORT_SOCKET) {
    const config = typedConfig(socket, path, CONFIG_TYPES.upstreamProxyProtocol);
    const wrappedPath = childPath(childPath(path, 'typed_config'), 'transport_socket');
    // The proto requires it when typed_config is there; without one it is missing all the same.
    const wrapped = messageField(config, 'transport_socket');
    if (wrapped === undefined) throw new FieldError(wrappedPath, 'value is required');
    validateTransportSocket(wrapped, wrappedPath);
  } else throw new FieldError(childPath(path, 'name'), unknownExtension(name));
}
