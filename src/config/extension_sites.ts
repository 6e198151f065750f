// Where extensions (named, typed-config'd objects) sit in a bootstrap. Both the v2 upgrade (on
// the file as written) and name normalization (on the decoded v3 JSON) visit the same places;
// this is the one list of them.

import { childPath, indexPath } from './field_path';
import { registeredExtensionName } from './extension_registry';
import { cloneJson, isJsonObject, JsonObject, messageField, messageList } from './json';
import { HTTP_CONNECTION_MANAGER, UPSTREAM_PROXY_PROTOCOL_TRANSPORT_SOCKET } from './names';

export type ExtensionSite =
  | 'listener_filter'
  | 'network_filter'
  | 'http_filter'
  | 'downstream_transport_socket'
  | 'upstream_transport_socket'
  | 'upstream_network_filter';

export type ExtensionVisitor = (extension: JsonObject, site: ExtensionSite, path: string) => void;

/**
 * Calls `visit` on every extension of the bootstrap's static resources, parents first: a
 * visitor may rewrite a network filter's config before its HTTP filters are visited.
 */
export function forEachExtension(bootstrap: JsonObject, visit: ExtensionVisitor): void {
  const resources = messageField(bootstrap, 'static_resources');
  if (resources === undefined) return;
  messageList(resources, 'listeners').forEach((listener, i) => {
    const listenerPath = indexPath('static_resources.listeners', i);
    eachOf(listener, 'listener_filters', listenerPath, 'listener_filter', visit);
    for (const [chain, chainPath] of filterChains(listener, listenerPath)) {
      eachOf(chain, 'filters', chainPath, 'network_filter', visit, (filter, filterPath) => {
        const config = filter['typed_config'];
        if (registeredExtensionName(filter, 'network_filter') === HTTP_CONNECTION_MANAGER && isJsonObject(config)) {
          eachOf(config, 'http_filters', childPath(filterPath, 'typed_config'), 'http_filter', visit);
        }
      });
      one(chain, 'transport_socket', chainPath, 'downstream_transport_socket', visit);
    }
  });
  messageList(resources, 'clusters').forEach((cluster, i) => forEachClusterExtension(cluster, indexPath('static_resources.clusters', i), visit));
}

/** The extensions of one cluster at `clusterPath`: a static one, or a CDS resource. */
export function forEachClusterExtension(cluster: JsonObject, clusterPath: string, visit: ExtensionVisitor): void {
  upstreamTransportSocket(cluster, clusterPath, visit);
  messageList(cluster, 'transport_socket_matches').forEach((match, j) => {
    upstreamTransportSocket(match, indexPath(childPath(clusterPath, 'transport_socket_matches'), j), visit);
  });
  eachOf(cluster, 'filters', clusterPath, 'upstream_network_filter', visit);
}

/** `parent`'s transport_socket, then the one it wraps when it is the upstream PROXY protocol socket. */
function upstreamTransportSocket(parent: JsonObject, parentPath: string, visit: ExtensionVisitor): void {
  const socket = messageField(parent, 'transport_socket');
  if (socket === undefined) return;
  const socketPath = childPath(parentPath, 'transport_socket');
  visit(socket, 'upstream_transport_socket', socketPath);
  const config = messageField(socket, 'typed_config');
  if (config !== undefined && registeredExtensionName(socket, 'upstream_transport_socket') === UPSTREAM_PROXY_PROTOCOL_TRANSPORT_SOCKET) {
    upstreamTransportSocket(config, childPath(socketPath, 'typed_config'), visit);
  }
}

/** A listener's filter chains with their paths. */
export function filterChains(listener: JsonObject, listenerPath: string): Array<[JsonObject, string]> {
  return messageList(listener, 'filter_chains').map((chain, i) => [
    chain,
    indexPath(childPath(listenerPath, 'filter_chains'), i),
  ]);
}

function one(parent: JsonObject, key: string, parentPath: string, site: ExtensionSite, visit: ExtensionVisitor): void {
  const extension = messageField(parent, key);
  if (extension !== undefined) visit(extension, site, childPath(parentPath, key));
}

function eachOf(
  parent: JsonObject,
  key: string,
  parentPath: string,
  site: ExtensionSite,
  visit: ExtensionVisitor,
  afterVisit?: (extension: JsonObject, path: string) => void,
): void {
  messageList(parent, key).forEach((extension, i) => {
    const path = indexPath(childPath(parentPath, key), i);
    visit(extension, site, path);
    afterVisit?.(extension, path);
  });
}

/**
 * Names every extension of the bootstrap as our registry names it (`proxy.` names), in place
 * (the caller owns its decoded copy; a large one is not cloned): an extension found by its
 * typed_config's type takes the name of what it was found to be, so that validation, the model
 * and /config_dump all see the one implementation that runs it.
 */
export function canonicalizeExtensionNames(bootstrap: JsonObject): JsonObject {
  forEachExtension(bootstrap, canonicalize);
  return bootstrap;
}

/** The same for one cluster (a CDS resource). */
export function canonicalizeClusterExtensionNames(cluster: JsonObject): JsonObject {
  const copy = cloneJson(cluster);
  forEachClusterExtension(copy, '', canonicalize);
  return copy;
}

function canonicalize(extension: JsonObject, site: ExtensionSite): void {
  if (typeof extension['name'] === 'string') extension['name'] = registeredExtensionName(extension, site);
}
