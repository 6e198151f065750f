// Listeners: address, filter chains, and the network filters in them.

import { FieldError, FieldErrorCollector } from '../errors';
import { filterChains } from '../extension_sites';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageField, messageList, stringField } from '../json';
import { CONFIG_TYPES, HTTP_CONNECTION_MANAGER, RAW_BUFFER_TRANSPORT_SOCKET, ORIGINAL_DST_LISTENER_FILTER, TCP_PROXY, TLS_INSPECTOR, TLS_TRANSPORT_SOCKET } from '../names';
import { terminalFilterNotLast, typedConfig, unknownExtension } from './extensions';
import { validateHttpConnectionManager } from './http_connection_manager';
import { validateSocketAddress } from './socket_address';
import { validateTcpProxy } from './tcp_proxy';

type NetworkFilterValidator = (config: JsonObject, path: string, clusters: ReadonlySet<string>) => void;

/** The network filters we implement; both are terminal (they end their chain). */
const NETWORK_FILTERS: ReadonlyMap<string, { readonly configType: string; readonly validate: NetworkFilterValidator }> =
  new Map([
    [TCP_PROXY, { configType: CONFIG_TYPES.tcpProxy, validate: validateTcpProxy }],
    [HTTP_CONNECTION_MANAGER, { configType: CONFIG_TYPES.httpConnectionManager, validate: validateHttpConnectionManager }],
  ]);

/** @param clusters the names of the static clusters, which filters may route to */
export function validateListeners(bootstrap: JsonObject, clusters: ReadonlySet<string>, errors: FieldErrorCollector): void {
  const names = new Set<string>();
  const resources = messageField(bootstrap, 'static_resources') ?? {};
  messageList(resources, 'listeners').forEach((listener, i) => errors.run(() => validateListener(listener, i, names, clusters)));
}

function validateListener(listener: JsonObject, i: number, names: Set<string>, clusters: ReadonlySet<string>): void {
  const path = indexPath('static_resources.listeners', i);
  // An unnamed listener gets a generated, unique name.
  const name = stringField(listener, 'name');
  if (name !== '' && names.has(name)) throw new FieldError(childPath(path, 'name'), `duplicate listener name '${name}'`);
  names.add(name);
  validateSocketAddress(messageField(listener, 'address'), childPath(path, 'address'), 'ip');
  // The TLS inspector and original_dst are the listener filters implemented.
  messageList(listener, 'listener_filters').forEach((filter, k) => {
    const filterPath = indexPath(childPath(path, 'listener_filters'), k);
    const name = stringField(filter, 'name');
    if (name === TLS_INSPECTOR) typedConfig(filter, filterPath, CONFIG_TYPES.tlsInspector);
    else if (name === ORIGINAL_DST_LISTENER_FILTER) typedConfig(filter, filterPath, CONFIG_TYPES.originalDst);
    else throw new FieldError(childPath(filterPath, 'name'), unknownExtension(name));
  });
  const chains = filterChains(listener, path);
  if (chains.length === 0) throw new FieldError(childPath(path, 'filter_chains'), 'no filter chains specified');
  for (const [chain, chainPath] of chains) {
    validateNetworkFilters(chain, chainPath, clusters);
    validateTransportSocket(chain, chainPath);
  }
}

/** Plaintext or TLS; what a DownstreamTlsContext holds is checked when its context is built. */
function validateTransportSocket(chain: JsonObject, chainPath: string): void {
  const socket = messageField(chain, 'transport_socket');
  if (socket === undefined) return;
  const socketPath = childPath(chainPath, 'transport_socket');
  const name = stringField(socket, 'name');
  if (name === TLS_TRANSPORT_SOCKET) typedConfig(socket, socketPath, CONFIG_TYPES.downstreamTlsContext);
  else if (name === RAW_BUFFER_TRANSPORT_SOCKET) typedConfig(socket, socketPath, CONFIG_TYPES.rawBuffer);
  else throw new FieldError(childPath(socketPath, 'name'), unknownExtension(name));
}

function validateNetworkFilters(chain: JsonObject, chainPath: string, clusters: ReadonlySet<string>): void {
  const filtersPath = childPath(chainPath, 'filters');
  const filters = messageList(chain, 'filters');
  if (filters.length === 0) {
    throw new FieldError(filtersPath, `a filter chain needs a terminal filter: ${TCP_PROXY} or ${HTTP_CONNECTION_MANAGER}`);
  }
  filters.forEach((filter, k) => {
    const filterPath = indexPath(filtersPath, k);
    const name = stringField(filter, 'name');
    const implementation = NETWORK_FILTERS.get(name);
    if (implementation === undefined) throw new FieldError(childPath(filterPath, 'name'), unknownExtension(name));
    if (k < filters.length - 1) throw new FieldError(childPath(filterPath, 'name'), terminalFilterNotLast(name, 'network'));
    const config = typedConfig(filter, filterPath, implementation.configType);
    implementation.validate(config, childPath(filterPath, 'typed_config'), clusters);
  });
}
