// Cluster.transport_socket_matches (Envoy's TransportSocketMatcherImpl, 1.16): an endpoint's
// `proxy.transport_socket_match` metadata is compared with each entry's `match` in order; the
// first whose every field the endpoint holds with an equal value wins, and an empty match
// holds for any endpoint. Pure: metadata in, an index out.

import { valuesEqual } from './protobuf_value';

/** The endpoint metadata namespace the matches read (Envoy's `envoy.transport_socket_match`). */
export const TRANSPORT_SOCKET_MATCH_NAMESPACE = 'proxy.transport_socket_match';

/**
 * @param matches each entry's `match` Struct, in configuration order
 * @param hostMetadata the endpoint's filter_metadata by namespace
 * @returns the index of the first entry that matches, or -1: the cluster's own transport socket
 */
export function transportSocketMatchIndex(matches: readonly Readonly<Record<string, unknown>>[], hostMetadata: Readonly<Record<string, unknown>>): number {
  const advertised = hostMetadata[TRANSPORT_SOCKET_MATCH_NAMESPACE];
  const fields = advertised !== null && typeof advertised === 'object' && !Array.isArray(advertised) ? (advertised as Record<string, unknown>) : null;
  return matches.findIndex((match) =>
    Object.entries(match).every(([name, value]) => fields !== null && Object.hasOwn(fields, name) && valuesEqual(fields[name], value)),
  );
}
