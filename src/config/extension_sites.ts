// Where extensions (named, typed-config'd objects) sit in a bootstrap. Both the v2 upgrade (on
// the file as written) and name normalization (on the decoded v3 JSON) visit the same places;
// this is the one list of them.

import type { ConfigExtensions, ExtensionCategory } from './extension';
import { childPath, indexPath, keyPath } from './field_path';
import { cloneJson, isJsonObject, JsonObject, messageField, messageList } from './json';
import { HTTP_CONNECTION_MANAGER, TCP_PROXY, UPSTREAM_PROXY_PROTOCOL_TRANSPORT_SOCKET } from './names';

export type ExtensionSite =
  | 'listener_filter'
  | 'network_filter'
  | 'http_filter'
  | 'downstream_transport_socket'
  | 'upstream_transport_socket'
  | 'upstream_network_filter'
  | 'access_log'
  | 'stats_sink'
  | 'resource_monitor'
  | 'tracer';

/** The registry category of the extensions found at each place of a bootstrap. */
export const SITE_CATEGORIES: Readonly<Record<ExtensionSite, ExtensionCategory>> = {
  listener_filter: 'proxy.filters.listener',
  network_filter: 'proxy.filters.network',
  http_filter: 'proxy.filters.http',
  downstream_transport_socket: 'proxy.transport_sockets.downstream',
  upstream_transport_socket: 'proxy.transport_sockets.upstream',
  upstream_network_filter: 'proxy.filters.upstream_network',
  access_log: 'proxy.access_loggers',
  stats_sink: 'proxy.stats_sinks',
  resource_monitor: 'proxy.resource_monitors',
  tracer: 'proxy.tracers',
};

export type ExtensionVisitor = (extension: JsonObject, site: ExtensionSite, path: string) => void;

/**
 * Calls `visit` on every extension of the bootstrap (its admin's transport socket, its tracer, its
 * static resources', then its stats sinks and resource monitors), parents first: a visitor may rewrite a network
 * filter's config before its HTTP filters are visited.
 */
export function forEachExtension(bootstrap: JsonObject, extensions: ConfigExtensions, visit: ExtensionVisitor): void {
  one(messageField(messageField(bootstrap, 'admin') ?? {}, 'security') ?? {}, 'transport_socket', 'admin.security', 'downstream_transport_socket', visit);
  one(messageField(bootstrap, 'tracing') ?? {}, 'http', 'tracing', 'tracer', visit);
  forEachStaticResourceExtension(bootstrap, extensions, visit);
  eachOf(bootstrap, 'stats_sinks', '', 'stats_sink', visit);
  eachOf(messageField(bootstrap, 'overload_manager') ?? {}, 'resource_monitors', 'overload_manager', 'resource_monitor', visit);
}

function forEachStaticResourceExtension(bootstrap: JsonObject, extensions: ConfigExtensions, visit: ExtensionVisitor): void {
  const resources = messageField(bootstrap, 'static_resources');
  if (resources === undefined) return;
  messageList(resources, 'listeners').forEach((listener, i) => {
    const listenerPath = indexPath('static_resources.listeners', i);
    eachOf(listener, 'listener_filters', listenerPath, 'listener_filter', visit);
    for (const [chain, chainPath] of filterChains(listener, listenerPath)) {
      eachOf(chain, 'filters', chainPath, 'network_filter', visit, (filter, filterPath) => {
        const config = filter['typed_config'];
        if (!isJsonObject(config)) return;
        const configPath = childPath(filterPath, 'typed_config');
        const name = extensions.registeredName(SITE_CATEGORIES.network_filter, filter);
        if (name === HTTP_CONNECTION_MANAGER) eachOf(config, 'http_filters', configPath, 'http_filter', visit);
        // Both terminal filters log what they end (a stream, a connection) to their access logs.
        if (name === HTTP_CONNECTION_MANAGER || name === TCP_PROXY) eachOf(config, 'access_log', configPath, 'access_log', visit);
        if (name === HTTP_CONNECTION_MANAGER) one(messageField(config, 'tracing') ?? {}, 'provider', childPath(configPath, 'tracing'), 'tracer', visit);
      });
      one(chain, 'transport_socket', chainPath, 'downstream_transport_socket', visit);
    }
  });
  messageList(resources, 'clusters').forEach((cluster, i) => forEachClusterExtension(cluster, indexPath('static_resources.clusters', i), extensions, visit));
}

/**
 * Calls `visit` on every typed_per_filter_config key (an HTTP filter's name, as written) of the
 * static connection managers' routes: on virtual hosts, routes and weighted clusters.
 */
export function forEachPerFilterConfigName(bootstrap: JsonObject, extensions: ConfigExtensions, visit: (name: string, path: string) => void): void {
  forEachExtension(bootstrap, extensions, (extension, site, path) => {
    if (site !== 'network_filter' || extensions.registeredName(SITE_CATEGORIES.network_filter, extension) !== HTTP_CONNECTION_MANAGER) return;
    const routeConfig = messageField(messageField(extension, 'typed_config') ?? {}, 'route_config') ?? {};
    forEachRoutePerFilterConfigName(routeConfig, childPath(childPath(path, 'typed_config'), 'route_config'), visit);
  });
}

/** The same for one RouteConfiguration at `routeConfigPath` (an inline one, or an RDS resource). */
export function forEachRoutePerFilterConfigName(routeConfig: JsonObject, routeConfigPath: string, visit: (name: string, path: string) => void): void {
  const keysOf = (level: JsonObject, levelPath: string): void => {
    const mapPath = childPath(levelPath, 'typed_per_filter_config');
    for (const name of Object.keys(messageField(level, 'typed_per_filter_config') ?? {})) visit(name, keyPath(mapPath, name));
  };
  messageList(routeConfig, 'virtual_hosts').forEach((host, v) => {
    const hostPath = indexPath(childPath(routeConfigPath, 'virtual_hosts'), v);
    keysOf(host, hostPath);
    messageList(host, 'routes').forEach((route, r) => {
      const routePath = indexPath(childPath(hostPath, 'routes'), r);
      keysOf(route, routePath);
      const clustersPath = childPath(childPath(childPath(routePath, 'route'), 'weighted_clusters'), 'clusters');
      messageList(messageField(messageField(route, 'route') ?? {}, 'weighted_clusters') ?? {}, 'clusters').forEach((entry, c) => keysOf(entry, indexPath(clustersPath, c)));
    });
  });
}

/** The extensions of one cluster at `clusterPath`: a static one, or a CDS resource. */
export function forEachClusterExtension(cluster: JsonObject, clusterPath: string, extensions: ConfigExtensions, visit: ExtensionVisitor): void {
  upstreamTransportSocket(cluster, clusterPath, extensions, visit);
  messageList(cluster, 'transport_socket_matches').forEach((match, j) => {
    upstreamTransportSocket(match, indexPath(childPath(clusterPath, 'transport_socket_matches'), j), extensions, visit);
  });
  eachOf(cluster, 'filters', clusterPath, 'upstream_network_filter', visit);
}

/** `parent`'s transport_socket, then the one it wraps when it is the upstream PROXY protocol socket. */
function upstreamTransportSocket(parent: JsonObject, parentPath: string, extensions: ConfigExtensions, visit: ExtensionVisitor): void {
  const socket = messageField(parent, 'transport_socket');
  if (socket === undefined) return;
  const socketPath = childPath(parentPath, 'transport_socket');
  visit(socket, 'upstream_transport_socket', socketPath);
  const config = messageField(socket, 'typed_config');
  if (config !== undefined && extensions.registeredName(SITE_CATEGORIES.upstream_transport_socket, socket) === UPSTREAM_PROXY_PROTOCOL_TRANSPORT_SOCKET) {
    upstreamTransportSocket(config, childPath(socketPath, 'typed_config'), extensions, visit);
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
export function canonicalizeExtensionNames(bootstrap: JsonObject, extensions: ConfigExtensions): JsonObject {
  forEachExtension(bootstrap, extensions, canonicalizer(extensions));
  return bootstrap;
}

/** The same for one cluster (a CDS resource). */
export function canonicalizeClusterExtensionNames(cluster: JsonObject, extensions: ConfigExtensions): JsonObject {
  const copy = cloneJson(cluster);
  forEachClusterExtension(copy, '', extensions, canonicalizer(extensions));
  return copy;
}

function canonicalizer(extensions: ConfigExtensions): ExtensionVisitor {
  return (extension, site) => {
    if (typeof extension['name'] !== 'string') return;
    // Written only when it changes: LDS checks a listener beside the serving bootstrap's frozen, already canonical, resources.
    const name = extensions.registeredName(SITE_CATEGORIES[site], extension);
    if (name !== extension['name']) extension['name'] = name;
  };
}
