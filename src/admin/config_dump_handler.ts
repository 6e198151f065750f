// GET /config_dump: the configuration in Envoy's envoy.admin.v3 dump messages, one Any per
// config tracker key in key order (bootstrap, clusters, [endpoint], listeners, route_scopes,
// routes, secrets), pretty printed, with sensitive fields redacted (config/redact.ts). Each
// static resource carries the time it was loaded, a CDS cluster, an RDS route configuration or
// an SDS secret its version and when it came. ?resource= lists the items of one repeated field
// of the dumps instead; ?mask= keeps only some fields.

import type { Bootstrap } from '../config/model';
import { isJsonObject, JsonObject, JsonValue, messageField, messageList, stringField } from '../config/json';
import { HTTP_CONNECTION_MANAGER, typeUrl } from '../config/names';
import { redactSensitive } from '../config/redact';
import { protoSchema } from '../config/schema';
import { AdminHandler, AdminResponse, JSON_TYPE } from './admin_server';
import { applyFieldMask, parseFieldMask } from './field_mask';
import type { DynamicSecretDump } from '../secret/secret_manager';

const ADMIN = 'envoy.admin.v3';
const CLUSTER_TYPE = 'envoy.config.cluster.v3.Cluster';
const ROUTE_CONFIGURATION_TYPE = 'envoy.config.route.v3.RouteConfiguration';
const SECRET_TYPE = 'envoy.extensions.transport_sockets.tls.v3.Secret';
const LISTENER_TYPE = 'envoy.config.listener.v3.Listener';

/**
 * The fields of each dump message, and for a repeated one the type of its items (?resource=
 * packs each item as an Any of that type). The envoy.admin.v3 protos, which the build does not
 * load, define them.
 */
const DUMP_FIELDS: Readonly<Record<string, Readonly<Record<string, string | null>>>> = {
  BootstrapConfigDump: { bootstrap: null, last_updated: null },
  ClustersConfigDump: {
    version_info: null,
    static_clusters: 'ClustersConfigDump.StaticCluster',
    dynamic_active_clusters: 'ClustersConfigDump.DynamicCluster',
    dynamic_warming_clusters: 'ClustersConfigDump.DynamicCluster',
  },
  EndpointsConfigDump: {
    static_endpoint_configs: 'EndpointsConfigDump.StaticEndpointConfig',
    dynamic_endpoint_configs: 'EndpointsConfigDump.DynamicEndpointConfig',
  },
  ListenersConfigDump: {
    version_info: null,
    static_listeners: 'ListenersConfigDump.StaticListener',
    dynamic_listeners: 'ListenersConfigDump.DynamicListener',
  },
  ScopedRoutesConfigDump: {
    inline_scoped_route_configs: 'ScopedRoutesConfigDump.InlineScopedRouteConfigs',
    dynamic_scoped_route_configs: 'ScopedRoutesConfigDump.DynamicScopedRouteConfigs',
  },
  RoutesConfigDump: {
    static_route_configs: 'RoutesConfigDump.StaticRouteConfig',
    dynamic_route_configs: 'RoutesConfigDump.DynamicRouteConfig',
  },
  SecretsConfigDump: {
    static_secrets: 'SecretsConfigDump.StaticSecret',
    dynamic_active_secrets: 'SecretsConfigDump.DynamicSecret',
    dynamic_warming_secrets: 'SecretsConfigDump.DynamicSecret',
  },
};

/** One CDS cluster as ClustersConfigDump.DynamicCluster shows it. */
export interface DynamicClusterDump {
  readonly versionInfo: string;
  /** The resource as loaded, v3 JSON. */
  readonly source: JsonObject;
  readonly lastUpdated: Date;
}

/** The CDS part of ClustersConfigDump; null without CDS. */
export interface DynamicClustersDump {
  /** The last version CDS applied. */
  readonly versionInfo: string;
  readonly active: readonly DynamicClusterDump[];
  readonly warming: readonly DynamicClusterDump[];
}

/** A route configuration RDS brought, as RoutesConfigDump.DynamicRouteConfig shows it. */
export interface DynamicRouteConfigDump {
  /** The version of the update that brought this content. */
  readonly versionInfo: string;
  /** The resource as received, v3 JSON. */
  readonly source: JsonObject;
  readonly lastUpdated: Date;
}

/** One state of a listener LDS brought (ListenersConfigDump.DynamicListenerState). */
export interface DynamicListenerStateDump {
  readonly versionInfo: string;
  /** The resource as loaded, v3 JSON. */
  readonly source: JsonObject;
  readonly lastUpdated: Date;
}

/** Why the last LDS update refused a listener (UpdateFailureState). */
export interface ListenerFailureDump {
  readonly details: string;
  /** The resource refused, v3 JSON. */
  readonly failedConfiguration: JsonObject;
  readonly lastUpdateAttempt: Date;
}

/** A listener LDS brought, as ListenersConfigDump.DynamicListener shows it. */
export interface DynamicListenerDump {
  readonly name: string;
  readonly active: DynamicListenerStateDump | null;
  /** A new or changed one waiting for what it needs (its RDS) before it takes traffic. */
  readonly warming: DynamicListenerStateDump | null;
  /** What a change or a removal replaced, while its connections drain. */
  readonly draining: DynamicListenerStateDump | null;
  readonly error: ListenerFailureDump | null;
}

/** The LDS part of ListenersConfigDump; null without LDS. */
export interface DynamicListenersDump {
  /** The last version LDS applied. */
  readonly versionInfo: string;
  readonly listeners: readonly DynamicListenerDump[];
}

export interface ConfigDumpQuery {
  /** `?include_eds`: also the endpoints of every cluster. */
  readonly includeEds: boolean;
  /** `?resource=`: the items of this repeated field of the dumps. */
  readonly resource?: string;
  /** `?mask=`: a FieldMask applied to each dump, or to each item with ?resource=. */
  readonly mask?: string;
}

/** The body, or Envoy's 404 (no dump has the resource) or 400 (the field is not a list). */
export function renderConfigDump(
  bootstrap: JsonObject,
  loadedAt: Date,
  query: ConfigDumpQuery,
  dynamicClusters: DynamicClustersDump | null = null,
  dynamicRoutes: readonly DynamicRouteConfigDump[] = [],
  dynamicSecrets: readonly DynamicSecretDump[] = [],
  dynamicListeners: DynamicListenersDump | null = null,
): AdminResponse {
  const dumps = configDumps(bootstrap, loadedAt, query.includeEds, dynamicClusters, dynamicRoutes, dynamicSecrets, dynamicListeners);
  const mask = query.mask === undefined ? null : parseFieldMask(query.mask);
  let configs: JsonObject[];
  if (query.resource === undefined) {
    configs = mask === null ? dumps : dumps.map((d) => applyFieldMask(d, mask));
  } else {
    const resource = query.resource;
    const dump = dumps.find((d) => resource in (DUMP_FIELDS[dumpTypeName(d)] ?? {}));
    if (dump === undefined) return { status: 404, body: `${resource} not found in config dump\n` };
    const itemType = DUMP_FIELDS[dumpTypeName(dump)]![resource];
    if (itemType === null) {
      return { status: 400, body: `${resource} is not a repeated field. Use ?mask=${resource} to get only this field\n` };
    }
    const items = Array.isArray(dump[resource]) ? (dump[resource] as JsonValue[]).filter(isJsonObject) : [];
    configs = items.map((item) => {
      const packed = any(`${ADMIN}.${itemType}`, item);
      return mask === null ? packed : applyFieldMask(packed, mask);
    });
  }
  // Proto JSON leaves an empty list out: no configs is an empty message.
  const body = configs.length === 0 ? {} : { configs };
  return { status: 200, contentType: JSON_TYPE, body: `${JSON.stringify(body, null, 1)}\n` };
}

function dumpTypeName(dump: JsonObject): string {
  const url = typeof dump['@type'] === 'string' ? dump['@type'] : '';
  return url.slice(url.lastIndexOf('.') + 1);
}

/** The dump messages, each an Any, in config tracker key order. */
function configDumps(
  source: JsonObject,
  loadedAt: Date,
  includeEds: boolean,
  dynamicClusters: DynamicClustersDump | null,
  dynamicRoutes: readonly DynamicRouteConfigDump[],
  dynamicSecrets: readonly DynamicSecretDump[],
  dynamicListeners: DynamicListenersDump | null,
): JsonObject[] {
  const resources = messageField(source, 'static_resources') ?? {};
  const lastUpdated = loadedAt.toISOString();
  const clusters = messageList(resources, 'clusters');
  const routeConfigs = inlineRouteConfigs(source);

  const configs: JsonObject[] = [
    any(`${ADMIN}.BootstrapConfigDump`, { bootstrap: source, last_updated: lastUpdated }),
    any(`${ADMIN}.ClustersConfigDump`, {
      // Proto JSON leaves an empty string out: no CDS version, no field.
      ...(dynamicClusters !== null && dynamicClusters.versionInfo !== '' ? { version_info: dynamicClusters.versionInfo } : {}),
      static_clusters: clusters.map((cluster) => ({
        cluster: any(CLUSTER_TYPE, cluster),
        last_updated: lastUpdated,
      })),
      dynamic_active_clusters: (dynamicClusters?.active ?? []).map(dynamicCluster),
      dynamic_warming_clusters: (dynamicClusters?.warming ?? []).map(dynamicCluster),
    }),
  ];
  if (includeEds) {
    configs.push(
      any(`${ADMIN}.EndpointsConfigDump`, {
        // A CDS cluster's own load_assignment is as static as a bootstrap cluster's (Envoy lists both).
        static_endpoint_configs: [
          ...clusters.map((cluster) => ({ cluster, lastUpdated })),
          ...(dynamicClusters?.active ?? []).map((c) => ({ cluster: c.source, lastUpdated: c.lastUpdated.toISOString() })),
        ].flatMap(({ cluster, lastUpdated: updated }) => {
          const assignment = messageField(cluster, 'load_assignment');
          if (assignment === undefined) return [];
          return [{ endpoint_config: any('envoy.config.endpoint.v3.ClusterLoadAssignment', assignment), last_updated: updated }];
        }),
      }),
    );
  }
  configs.push(
    any(`${ADMIN}.ListenersConfigDump`, {
      ...(dynamicListeners !== null && dynamicListeners.versionInfo !== '' ? { version_info: dynamicListeners.versionInfo } : {}),
      static_listeners: messageList(resources, 'listeners').map((listener) => ({
        listener: any(LISTENER_TYPE, listener),
        last_updated: lastUpdated,
      })),
      dynamic_listeners: (dynamicListeners?.listeners ?? []).map(dynamicListener),
    }),
  );
  // An HTTP connection manager creates the route and scoped route providers, as in Envoy.
  if (routeConfigs !== null) {
    configs.push(
      any(`${ADMIN}.ScopedRoutesConfigDump`, {}),
      any(`${ADMIN}.RoutesConfigDump`, {
        static_route_configs: routeConfigs.map((routeConfig) => ({
          route_config: any(ROUTE_CONFIGURATION_TYPE, routeConfig),
          last_updated: lastUpdated,
        })),
        dynamic_route_configs: dynamicRoutes.map(dynamicRouteConfig),
      }),
    );
  }
  configs.push(
    any(`${ADMIN}.SecretsConfigDump`, {
      static_secrets: messageList(resources, 'secrets').map((secret) => ({
        name: stringField(secret, 'name'),
        last_updated: lastUpdated,
        secret: any(SECRET_TYPE, secret),
      })),
      dynamic_active_secrets: dynamicSecrets.filter((s) => s.secret !== null).map(dynamicSecret),
      dynamic_warming_secrets: dynamicSecrets.filter((s) => s.secret === null).map(dynamicSecret),
    }),
  );
  return configs;
}

function dynamicCluster(cluster: DynamicClusterDump): JsonObject {
  const schema = protoSchema();
  return {
    ...(cluster.versionInfo !== '' ? { version_info: cluster.versionInfo } : {}),
    cluster: any(CLUSTER_TYPE, redactSensitive(schema, schema.root.lookupType(CLUSTER_TYPE), cluster.source)),
    last_updated: cluster.lastUpdated.toISOString(),
  };
}

function dynamicListener(listener: DynamicListenerDump): JsonObject {
  const schema = protoSchema();
  const state = (dump: DynamicListenerStateDump | null) =>
    dump === null
      ? {}
      : {
          ...(dump.versionInfo !== '' ? { version_info: dump.versionInfo } : {}),
          listener: any(LISTENER_TYPE, redactSensitive(schema, schema.root.lookupType(LISTENER_TYPE), dump.source)),
          last_updated: dump.lastUpdated.toISOString(),
        };
  const error = listener.error;
  return {
    name: listener.name,
    ...(listener.active !== null ? { active_state: state(listener.active) } : {}),
    ...(listener.warming !== null ? { warming_state: state(listener.warming) } : {}),
    ...(listener.draining !== null ? { draining_state: state(listener.draining) } : {}),
    ...(error !== null
      ? {
          error_state: {
            failed_configuration: any(LISTENER_TYPE, redactSensitive(schema, schema.root.lookupType(LISTENER_TYPE), error.failedConfiguration)),
            last_update_attempt: error.lastUpdateAttempt.toISOString(),
            details: error.details,
          },
        }
      : {}),
  };
}

function dynamicRouteConfig(route: DynamicRouteConfigDump): JsonObject {
  const schema = protoSchema();
  return {
    ...(route.versionInfo !== '' ? { version_info: route.versionInfo } : {}),
    route_config: any(ROUTE_CONFIGURATION_TYPE, redactSensitive(schema, schema.root.lookupType(ROUTE_CONFIGURATION_TYPE), route.source)),
    last_updated: route.lastUpdated.toISOString(),
  };
}

/** An SDS secret, its private key and password redacted as the bootstrap's; a warming one has only its name. */
function dynamicSecret(secret: DynamicSecretDump): JsonObject {
  const schema = protoSchema();
  return {
    name: secret.name,
    version_info: secret.versionInfo,
    last_updated: secret.lastUpdated.toISOString(),
    secret: any(SECRET_TYPE, secret.secret === null ? { name: secret.name } : redactSensitive(schema, schema.root.lookupType(SECRET_TYPE), secret.secret)),
  };
}

/** The bootstrap as /config_dump shows it: its sensitive fields redacted. */
export function redactedBootstrap(bootstrap: Bootstrap): JsonObject {
  const source = isJsonObject(bootstrap.source) ? bootstrap.source : {};
  const schema = protoSchema();
  return redactSensitive(schema, schema.bootstrap, source);
}

/**
 * `nodeFields`: what the server writes into the node (its user agent and extensions), shown in
 * the bootstrap as Envoy shows them. `dynamicClusters`: the CDS clusters now (null without CDS).
 * `dynamicRoutes`: the route configurations RDS brought. `dynamicSecrets`: the SDS secrets.
 */
export function configDumpHandler(
  bootstrap: Bootstrap,
  nodeFields: JsonObject,
  loadedAt: Date,
  dynamicClusters: () => DynamicClustersDump | null = () => null,
  dynamicRoutes: () => readonly DynamicRouteConfigDump[] = () => [],
  dynamicSecrets: () => readonly DynamicSecretDump[] = () => [],
  dynamicListeners: () => DynamicListenersDump | null = () => null,
): AdminHandler {
  // Redacted once, on first use: the configuration is static, and a large one would delay start-up.
  let source: JsonObject | null = null;
  // An empty field (the home page's form sends one) means no such parameter.
  const param = (req: { query: ReadonlyMap<string, string> }, name: string) => {
    const value = req.query.get(name);
    return value === '' ? undefined : value;
  };
  return {
    path: '/config_dump',
    help: 'dump current Proxy configs (experimental)',
    mutatesState: false,
    decodeQuery: true,
    params: [
      { name: 'resource', help: 'the items of one repeated field, e.g. static_clusters', kind: 'text' },
      { name: 'mask', help: 'a field mask, e.g. cluster.name,last_updated', kind: 'text' },
      { name: 'include_eds', help: 'also the endpoints of every cluster', kind: 'flag' },
    ],
    handle: (req) =>
      renderConfigDump(
        (source ??= withNodeFields(redactedBootstrap(bootstrap), nodeFields)),
        loadedAt,
        { includeEds: req.query.has('include_eds'), resource: param(req, 'resource'), mask: param(req, 'mask') },
        dynamicClusters(),
        dynamicRoutes(),
        dynamicSecrets(),
        dynamicListeners(),
      ),
  };
}

/** The bootstrap with the server's fields added to its node (node is Bootstrap's first field). */
function withNodeFields(bootstrap: JsonObject, fields: JsonObject): JsonObject {
  const { node, ...rest } = bootstrap;
  return { node: { ...(isJsonObject(node) ? node : {}), ...fields }, ...rest };
}

/** The inline route_config of every HTTP connection manager (names canonical); null when there is none. */
function inlineRouteConfigs(bootstrap: JsonObject): JsonObject[] | null {
  const listeners = messageList(messageField(bootstrap, 'static_resources') ?? {}, 'listeners');
  const managers = listeners
    .flatMap((listener) => messageList(listener, 'filter_chains'))
    .flatMap((chain) => messageList(chain, 'filters'))
    .filter((filter) => stringField(filter, 'name') === HTTP_CONNECTION_MANAGER);
  if (managers.length === 0) return null;
  return managers.flatMap((manager) => {
    const routeConfig = messageField(messageField(manager, 'typed_config') ?? {}, 'route_config');
    return routeConfig === undefined ? [] : [routeConfig];
  });
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
