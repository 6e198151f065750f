// GET /config_dump: the configuration in Envoy's envoy.admin.v3 dump messages, one Any per
// config tracker key in key order (bootstrap, clusters, [endpoint], listeners, route_scopes,
// routes, secrets), pretty printed. Everything here is static configuration, so every resource
// carries the time it was loaded.

import type { Bootstrap } from '../config/model';
import { forEachExtension } from '../config/extension_sites';
import { isJsonObject, JsonObject, JsonValue, messageField, messageList, stringField } from '../config/json';
import { HTTP_CONNECTION_MANAGER, typeUrl } from '../config/names';
import { AdminHandler, JSON_TYPE } from './admin_server';

const ADMIN = 'envoy.admin.v3';

/** @param includeEds `?include_eds`: also the endpoints of every cluster */
export function renderConfigDump(bootstrap: Bootstrap, loadedAt: Date, includeEds: boolean): string {
  const source = isJsonObject(bootstrap.source) ? bootstrap.source : {};
  const resources = messageField(source, 'static_resources') ?? {};
  const lastUpdated = loadedAt.toISOString();
  const clusters = messageList(resources, 'clusters');
  const routeConfigs = inlineRouteConfigs(source);

  const configs: JsonObject[] = [
    any(`${ADMIN}.BootstrapConfigDump`, { bootstrap: source, last_updated: lastUpdated }),
    any(`${ADMIN}.ClustersConfigDump`, {
      static_clusters: clusters.map((cluster) => ({
        cluster: any('envoy.config.cluster.v3.Cluster', cluster),
        last_updated: lastUpdated,
      })),
    }),
  ];
  if (includeEds) {
    configs.push(
      any(`${ADMIN}.EndpointsConfigDump`, {
        static_endpoint_configs: clusters.flatMap((cluster) => {
          const assignment = messageField(cluster, 'load_assignment');
          if (assignment === undefined) return [];
          return [{ endpoint_config: any('envoy.config.endpoint.v3.ClusterLoadAssignment', assignment), last_updated: lastUpdated }];
        }),
      }),
    );
  }
  configs.push(
    any(`${ADMIN}.ListenersConfigDump`, {
      static_listeners: messageList(resources, 'listeners').map((listener) => ({
        listener: any('envoy.config.listener.v3.Listener', listener),
        last_updated: lastUpdated,
      })),
    }),
  );
  // An HTTP connection manager creates the route and scoped route providers, as in Envoy.
  if (routeConfigs !== null) {
    configs.push(
      any(`${ADMIN}.ScopedRoutesConfigDump`, {}),
      any(`${ADMIN}.RoutesConfigDump`, {
        static_route_configs: routeConfigs.map((routeConfig) => ({
          route_config: any('envoy.config.route.v3.RouteConfiguration', routeConfig),
          last_updated: lastUpdated,
        })),
      }),
    );
  }
  configs.push(any(`${ADMIN}.SecretsConfigDump`, {}));
  return `${JSON.stringify({ configs }, null, 1)}\n`;
}

export function configDumpHandler(bootstrap: Bootstrap, loadedAt: Date): AdminHandler {
  return {
    path: '/config_dump',
    help: 'dump current Proxy configs (experimental)',
    mutatesState: false,
    decodeQuery: true,
    handle: (req) => ({
      status: 200,
      contentType: JSON_TYPE,
      body: renderConfigDump(bootstrap, loadedAt, req.query.has('include_eds')),
    }),
  };
}

/** The inline route_config of every HTTP connection manager; null when there is none. */
function inlineRouteConfigs(bootstrap: JsonObject): JsonObject[] | null {
  let managers = 0;
  const routeConfigs: JsonObject[] = [];
  forEachExtension(bootstrap, (extension, site) => {
    if (site !== 'network_filter' || stringField(extension, 'name') !== HTTP_CONNECTION_MANAGER) return;
    managers++;
    const routeConfig = messageField(messageField(extension, 'typed_config') ?? {}, 'route_config');
    if (routeConfig !== undefined) routeConfigs.push(routeConfig);
  });
  return managers === 0 ? null : routeConfigs;
}

/** A google.protobuf.Any in proto JSON: the type URL, then the message's own fields. */
function any(typeName: string, message: JsonObject): JsonObject {
  const fields: Record<string, JsonValue> = { '@type': typeUrl(typeName) };
  for (const [key, value] of Object.entries(message)) {
    // Proto JSON leaves empty repeated fields out.
    if (!(Array.isArray(value) && value.length === 0)) fields[key] = value;
  }
  return fields;
}
