// A cluster's transport sockets (transport_socket and each transport_socket_matches entry's):
// each an upstream transport socket of the registry (plaintext, TLS, or the upstream PROXY
// protocol socket wrapping one of them) with a typed_config of its type. What an
// UpstreamTlsContext holds is checked when it is built.

import type { ValidationContext } from '../extension';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageField, messageList } from '../json';
import { validateExtension } from './extensions';

export function validateUpstreamTransportSockets(cluster: JsonObject, clusterPath: string, context: ValidationContext): void {
  const socket = messageField(cluster, 'transport_socket');
  if (socket !== undefined) validateExtension('proxy.transport_sockets.upstream', socket, childPath(clusterPath, 'transport_socket'), context);
  messageList(cluster, 'transport_socket_matches').forEach((match, i) => {
    const matchSocket = messageField(match, 'transport_socket');
    const matchPath = indexPath(childPath(clusterPath, 'transport_socket_matches'), i);
    if (matchSocket !== undefined) validateExtension('proxy.transport_sockets.upstream', matchSocket, childPath(matchPath, 'transport_socket'), context);
  });
}
