// How a listener picks a filter chain for a connection, in the model: each chain's
// filter_chain_match and the listener filters that find what it matches on (the TLS inspector
// reads SNI and ALPN). Pure: decoded v3 JSON in.

import type { ConfigExtensions } from './extension';
import { JsonObject, messageList, numberField, stringField, stringList } from './json';
import type { FilterChainMatch, ListenerFilterConfig } from './model';
import { TLS_INSPECTOR } from './names';

/** An absent filter_chain_match matches every connection. */
export function filterChainMatch(config: JsonObject | undefined): FilterChainMatch {
  const match = config ?? {};
  return {
    // A UInt32Value: unset matches any port.
    destinationPort: match['destination_port'] === undefined ? null : numberField(match, 'destination_port'),
    // DNS names compare case-insensitively; SNI arrives lower-cased by the inspector.
    serverNames: stringList(match, 'server_names').map((name) => name.toLowerCase()),
    transportProtocol: stringField(match, 'transport_protocol'),
    applicationProtocols: stringList(match, 'application_protocols'),
  };
}

/**
 * The listener's filters, each modelled by its descriptor. A listener without a TLS inspector
 * whose chains match on SNI, ALPN or transport protocol 'tls' gets one, as in Envoy 1.16.
 */
export function listenerFilters(listener: JsonObject, matches: readonly FilterChainMatch[], extensions: ConfigExtensions): ListenerFilterConfig[] {
  const configured = messageList(listener, 'listener_filters').map((filter) => extensions.model('proxy.filters.listener', filter));
  const needsInspector = matches.some((m) => m.serverNames.length > 0 || m.applicationProtocols.length > 0 || m.transportProtocol === 'tls');
  if (!needsInspector || configured.some((filter) => filter.kind === 'tls_inspector')) return configured;
  return [...configured, { kind: 'tls_inspector', name: TLS_INSPECTOR, injected: true }];
}
