// The v2 -> v3 bootstrap upgrade: our own table of what changed between the two APIs, applied
// to the configuration as written (snake_case JSON) before it is decoded against the v3 protos.
// Rewrites touch only v2 constructs, so a v3 configuration passes through unchanged.

import type { ConfigExtensions } from './extension';
import { FieldError } from './errors';
import { forEachExtension, ExtensionSite, filterChains, SITE_CATEGORIES } from './extension_sites';
import { childPath, indexPath, keyPath } from './field_path';
import { cloneJson, isJsonObject, JsonObject, JsonValue, messageField, messageList, repeatedValues, stringField } from './json';
import { CONFIG_TYPES, HTTP_CONNECTION_MANAGER, TLS_TRANSPORT_SOCKET, PROTOCOL_OPTIONS_TYPES, typeNameOfUrl, typeUrl } from './names';
import { enumNameInAnyCase } from './proto_json';
import { protoSchema, ProtoSchema } from './schema';
import { noPerRouteConfig } from './validation/extensions';

/** core.v3.RequestMethod, whose names a v2 VirtualCluster's `method` takes. */
const REQUEST_METHOD = 'envoy.config.core.v3.RequestMethod';

/** The places v2 configured an extension with a `config:` Struct, in its own schema, that the upgrade types. */
const STRUCT_CONFIG_SITES: ReadonlySet<ExtensionSite> = new Set([
  'network_filter',
  'http_filter',
  'upstream_transport_socket',
  'downstream_transport_socket',
  'access_log',
  'stats_sink',
  'tracer',
]);

/** Fields that v3 renamed without changing their meaning. */
const CLUSTER_FIELD_RENAMES: ReadonlyMap<string, string> = new Map([
  ['drain_connections_on_host_removal', 'ignore_health_on_host_removal'],
]);
// The two RouteAction fields v3 renamed (v2 route_components.proto's field_migrate annotations).
const ROUTE_ACTION_FIELD_RENAMES: ReadonlyMap<string, string> = new Map([
  ['host_rewrite', 'host_rewrite_literal'],
  ['auto_host_rewrite_header', 'host_rewrite_header'],
]);

/**
 * v2 route fields, deprecated there, that v3 dropped, by the message holding them, with their
 * successor: Envoy 1.16 still reads them from a v2 file; this build does not.
 */
const V2_ONLY_FIELDS: Readonly<Record<'virtualCluster' | 'match' | 'cors', ReadonlyMap<string, string>>> = {
  // A std::regex (ECMAScript, backtracking) on the whole :path, as match.regex is.
  virtualCluster: new Map([['pattern', 'headers']]),
  match: new Map([['regex', 'safe_regex']]),
  // std::regex (ECMAScript, backtracking), as match.regex.
  cors: new Map([['allow_origin_regex', 'allow_origin_string_match']]),
};

/**
 * A v2 construct the upgrade recognizes and this build cannot honor. Reported as it is: read as
 * v3, the file would only have an unknown field, which --allow-unknown-static-fields skips.
 */
export class UnsupportedV2FieldError extends FieldError {}

/** v2 enum values that v3 removed, with their replacement and why. */
const LB_POLICY_RENAMES: ReadonlyMap<string, string> = new Map([['ORIGINAL_DST_LB', 'CLUSTER_PROVIDED']]);

export interface Upgraded {
  readonly json: JsonValue;
  /** One line per deprecated v2 construct found, `<field path>: <advice>`; decoding with `messageRewrites` adds to it. */
  readonly warnings: string[];
  /** What decoding `json` as v3 rewrites in messages wherever they sit (DecodeOptions.messageRewrites). */
  readonly messageRewrites: ReadonlyMap<string, (message: JsonObject, path: string) => void>;
}

/**
 * v2 messages found anywhere (inside typed configs too) that v3 says otherwise: a StringMatcher's
 * `regex` (deprecated in v2, dropped from v3) is a full-string match, as `safe_regex` is; it
 * becomes one, in RE2, which refuses by path what it cannot compile (backreferences, lookarounds).
 */
function messageRewrites(warnings: string[]): ReadonlyMap<string, (message: JsonObject, path: string) => void> {
  return new Map([
    [
      '.envoy.type.matcher.v3.StringMatcher',
      (matcher: JsonObject, path: string) => {
        if (!Object.hasOwn(matcher, 'regex')) return;
        const regex = takeField(matcher, 'regex');
        if (regex === null || regex === undefined) return;
        matcher['safe_regex'] = { google_re2: {}, regex };
        warnings.push(`${childPath(path, 'regex')}: deprecated option, use safe_regex instead`);
      },
    ],
  ]);
}

/**
 * Rewrites a v2 bootstrap into v3 form. Pure: the input is left untouched.
 * @param extensions the registry whose extensions' names and config types the upgrade reads
 * @param schema whose annotations name the v3 successor of each v2 message
 */
export function upgradeV2(input: JsonValue, extensions: ConfigExtensions, schema: ProtoSchema = protoSchema()): Upgraded {
  if (!isJsonObject(input)) return { json: input, warnings: [], messageRewrites: new Map() };
  const bootstrap = cloneJson(input, (object) => renameTypeUrl(object, schema));
  const warnings: string[] = [];
  upgradeRuntime(bootstrap, warnings);
  const resources = messageField(bootstrap, 'static_resources');
  if (resources !== undefined) {
    messageList(resources, 'clusters').forEach((cluster, i) => {
      upgradeCluster(cluster, indexPath('static_resources.clusters', i), warnings, extensions);
    });
    messageList(resources, 'listeners').forEach((listener, i) => {
      for (const [chain, chainPath] of filterChains(listener, indexPath('static_resources.listeners', i))) {
        moveTlsContext(chain, chainPath, CONFIG_TYPES.downstreamTlsContext, warnings);
      }
    });
  }
  forEachExtension(bootstrap, extensions, (extension, site, path) => {
    convertStructConfig(extension, site, path, extensions);
    if (site === 'network_filter' && extensions.registeredName(SITE_CATEGORIES[site], extension) === HTTP_CONNECTION_MANAGER) {
      const typedConfig = messageField(extension, 'typed_config');
      moveIdleTimeout(typedConfig, childPath(path, 'typed_config'), warnings);
      upgradeTracing(typedConfig, childPath(path, 'typed_config'), warnings);
      upgradeRoutes(typedConfig, childPath(path, 'typed_config'), warnings, schema, extensions);
    }
  });
  return { json: bootstrap, warnings, messageRewrites: messageRewrites(warnings) };
}

/**
 * v2 `runtime` -> `layered_runtime` as Envoy 1.16 translates it: a `base` static layer, a `root`
 * disk layer and an `override` disk layer (under the service cluster) when symlink_root is set,
 * then an `admin` layer. An explicit layered_runtime wins, as in Envoy.
 */
function upgradeRuntime(bootstrap: JsonObject, warnings: string[]): void {
  const runtime = takeField(bootstrap, 'runtime');
  if (runtime === undefined) return;
  if (Object.hasOwn(bootstrap, 'layered_runtime')) {
    warnings.push('runtime: deprecated option, ignored because layered_runtime is set');
    return;
  }
  warnings.push('runtime: deprecated option, use layered_runtime instead');
  if (!isJsonObject(runtime)) throw new FieldError('runtime', 'expected an object');
  const symlinkRoot = stringField(runtime, 'symlink_root');
  const overrideSubdirectory = stringField(runtime, 'override_subdirectory');
  const layers: JsonObject[] = [{ name: 'base', static_layer: runtime['base'] ?? {} }];
  if (symlinkRoot !== '') {
    layers.push({ name: 'root', disk_layer: { symlink_root: symlinkRoot, subdirectory: stringField(runtime, 'subdirectory') } });
    if (overrideSubdirectory !== '') {
      layers.push({
        name: 'override',
        disk_layer: { symlink_root: symlinkRoot, subdirectory: overrideSubdirectory, append_service_cluster: true },
      });
    }
  }
  layers.push({ name: 'admin', admin_layer: {} });
  bootstrap['layered_runtime'] = { layers };
}

function upgradeCluster(cluster: JsonObject, path: string, warnings: string[], extensions: ConfigExtensions): void {
  renameFields(cluster, CLUSTER_FIELD_RENAMES);
  const hostsPath = childPath(path, 'hosts');
  const hosts = takeField(cluster, 'hosts');
  if (hosts !== undefined) {
    warnings.push(`${hostsPath}: deprecated option, use load_assignment instead`);
    if (!Array.isArray(hosts) && !isJsonObject(hosts)) throw new FieldError(hostsPath, 'expected a list');
    // As in Envoy, an explicit load_assignment wins over hosts.
    if (!Object.hasOwn(cluster, 'load_assignment')) {
      cluster['load_assignment'] = {
        cluster_name: stringField(cluster, 'name'),
        endpoints: [{ lb_endpoints: repeatedValues(hosts).map((address) => ({ endpoint: { address } })) }],
      };
    }
  }
  moveTlsContext(cluster, path, CONFIG_TYPES.upstreamTlsContext, warnings);
  typeProtocolOptions(cluster, path, warnings, extensions);
  // Enum names are read in any case, like decoding does.
  const lbPolicy = stringField(cluster, 'lb_policy').toUpperCase();
  const replacement = LB_POLICY_RENAMES.get(lbPolicy);
  if (replacement !== undefined) {
    warnings.push(`${childPath(path, 'lb_policy')}: ${lbPolicy} is deprecated, use ${replacement} instead`);
    cluster['lb_policy'] = replacement;
  }
}

/** v2 `tls_context` -> v3 `transport_socket` named tls; an explicit transport_socket wins. */
function moveTlsContext(owner: JsonObject, path: string, contextType: string, warnings: string[]): void {
  const tlsPath = childPath(path, 'tls_context');
  const context = takeField(owner, 'tls_context');
  if (context === undefined) return;
  warnings.push(`${tlsPath}: deprecated option, use transport_socket (${TLS_TRANSPORT_SOCKET}) instead`);
  if (!isJsonObject(context)) throw new FieldError(tlsPath, 'expected an object');
  if (!Object.hasOwn(owner, 'transport_socket')) {
    owner['transport_socket'] = {
      name: TLS_TRANSPORT_SOCKET,
      typed_config: { '@type': typeUrl(contextType), ...context },
    };
  }
}

/**
 * v2 `extension_protocol_options` (Structs by extension name) -> `typed_extension_protocol_options`
 * (Any of the extension's protocol options type), as Envoy reads the Struct into that type. A
 * typed entry for the same extension wins, as in Envoy. An extension without protocol options
 * cannot have its Struct read, and is refused as Envoy refuses it.
 */
function typeProtocolOptions(cluster: JsonObject, path: string, warnings: string[], extensions: ConfigExtensions): void {
  const optionsPath = childPath(path, 'extension_protocol_options');
  const options = takeField(cluster, 'extension_protocol_options');
  if (options === undefined) return;
  warnings.push(`${optionsPath}: deprecated option, use typed_extension_protocol_options instead`);
  if (!isJsonObject(options)) throw new FieldError(optionsPath, 'expected a map (object)');
  const typed = messageField(cluster, 'typed_extension_protocol_options') ?? {};
  for (const [name, struct] of Object.entries(options)) {
    const entryPath = keyPath(optionsPath, name);
    const optionsType = PROTOCOL_OPTIONS_TYPES.get(extensions.canonicalName(name));
    if (optionsType === undefined) {
      throw new FieldError(entryPath, `Didn't find a registered network or http filter or protocol options implementation for name: '${name}'`);
    }
    if (!isJsonObject(struct)) throw new FieldError(entryPath, 'expected an object');
    if (!Object.hasOwn(typed, name)) typed[name] = { '@type': typeUrl(optionsType), ...struct };
  }
  cluster['typed_extension_protocol_options'] = typed;
}

/** v2 `config:` (a Struct in the extension's own schema) -> `typed_config` of the v3 type. */
function convertStructConfig(extension: JsonObject, site: ExtensionSite, path: string, extensions: ConfigExtensions): void {
  if (!STRUCT_CONFIG_SITES.has(site) || !Object.hasOwn(extension, 'config') || Object.hasOwn(extension, 'typed_config')) return;
  const configType = extensions.get(SITE_CATEGORIES[site], extensions.canonicalName(stringField(extension, 'name')))?.configType;
  // An extension we cannot type keeps its `config`, which decoding then reports by path.
  if (configType === undefined || configType === null) return;
  const config = takeField(extension, 'config') ?? {};
  if (!isJsonObject(config)) throw new FieldError(childPath(path, 'config'), 'expected an object');
  extension['typed_config'] = { '@type': typeUrl(configType), ...config };
}

/**
 * v2's connection manager `idle_timeout`, which v3 keeps only in common_http_protocol_options: moved
 * there, unless that one is set, which Envoy 1.16 reads first.
 */
function moveIdleTimeout(connectionManager: JsonObject | undefined, path: string, warnings: string[]): void {
  if (connectionManager === undefined || !Object.hasOwn(connectionManager, 'idle_timeout')) return;
  const idleTimeout = takeField(connectionManager, 'idle_timeout');
  const common = messageField(connectionManager, 'common_http_protocol_options') ?? {};
  if (!Object.hasOwn(common, 'idle_timeout')) common['idle_timeout'] = idleTimeout ?? null;
  connectionManager['common_http_protocol_options'] = common;
  warnings.push(`${childPath(path, 'idle_timeout')}: deprecated option, use common_http_protocol_options.idle_timeout instead`);
}

/**
 * v2's tracing.request_headers_for_tags and operation_name, which v3 dropped. Envoy 1.16 tags a
 * span with each listed request header (a request_header custom tag named for the header, ahead
 * of custom_tags, so it wins a clash). operation_name INGRESS is the default; EGRESS, which
 * the listener's traffic_direction OUTBOUND says in v3, is refused.
 */
function upgradeTracing(connectionManager: JsonObject | undefined, path: string, warnings: string[]): void {
  const tracing = connectionManager && messageField(connectionManager, 'tracing');
  if (tracing === undefined) return;
  const tracingPath = childPath(path, 'tracing');
  if (Object.hasOwn(tracing, 'operation_name')) {
    const operationPath = childPath(tracingPath, 'operation_name');
    const operation = takeField(tracing, 'operation_name');
    if (operation !== undefined && operation !== 0 && String(operation).toUpperCase() !== 'INGRESS') {
      throw new UnsupportedV2FieldError(
        operationPath,
        `operation_name ${String(operation)}, deprecated in v2 and dropped from v3 (the listener's traffic_direction OUTBOUND replaces it), is not implemented by this build (it would be ignored)`,
      );
    }
    warnings.push(`${operationPath}: deprecated option, use the listener's traffic_direction instead`);
  }
  if (!Object.hasOwn(tracing, 'request_headers_for_tags')) return;
  const headers = takeField(tracing, 'request_headers_for_tags');
  const tags = (headers === undefined ? [] : repeatedValues(headers)).map((name): JsonValue => ({ tag: name, request_header: { name } }));
  const custom = tracing['custom_tags'];
  tracing['custom_tags'] = [...tags, ...(custom === undefined || custom === null ? [] : repeatedValues(custom))];
  warnings.push(`${childPath(tracingPath, 'request_headers_for_tags')}: deprecated option, use custom_tags instead`);
}

/** An HTTP connection manager's static routes at `path`: renamed fields renamed, moved ones moved, dropped ones refused. */
function upgradeRoutes(connectionManager: JsonObject | undefined, path: string, warnings: string[], schema: ProtoSchema, extensions: ConfigExtensions): void {
  const routeConfig = connectionManager && messageField(connectionManager, 'route_config');
  if (routeConfig === undefined) return;
  const routeConfigPath = childPath(path, 'route_config');
  messageList(routeConfig, 'virtual_hosts').forEach((virtualHost, i) => {
    const virtualHostPath = indexPath(childPath(routeConfigPath, 'virtual_hosts'), i);
    typePerFilterConfig(virtualHost, virtualHostPath, warnings, extensions);
    upgradeCors(virtualHost, virtualHostPath, warnings);
    messageList(virtualHost, 'virtual_clusters').forEach((cluster, k) => {
      upgradeVirtualCluster(cluster, indexPath(childPath(virtualHostPath, 'virtual_clusters'), k), warnings, schema);
    });
    messageList(virtualHost, 'routes').forEach((route, j) => {
      const routePath = indexPath(childPath(virtualHostPath, 'routes'), j);
      typePerFilterConfig(route, routePath, warnings, extensions);
      const match = messageField(route, 'match');
      if (match !== undefined) refuseDroppedFields(match, childPath(routePath, 'match'), V2_ONLY_FIELDS.match);
      const action = messageField(route, 'route');
      if (action === undefined) return;
      const actionPath = childPath(routePath, 'route');
      renameFields(action, ROUTE_ACTION_FIELD_RENAMES);
      moveMirrorPolicy(action, actionPath, warnings);
      upgradeCors(action, actionPath, warnings);
      const weighted = messageField(action, 'weighted_clusters');
      const weightedPath = childPath(actionPath, 'weighted_clusters');
      messageList(weighted ?? {}, 'clusters').forEach((entry, k) => {
        typePerFilterConfig(entry, indexPath(childPath(weightedPath, 'clusters'), k), warnings, extensions);
      });
    });
  });
}

/**
 * A v2 VirtualCluster's `method` becomes one more header matcher, `:method` exactly, as Envoy 1.16
 * adds it, after its check that the virtual cluster has a pattern or headers of its own.
 */
function upgradeVirtualCluster(cluster: JsonObject, path: string, warnings: string[], schema: ProtoSchema): void {
  refuseDroppedFields(cluster, path, V2_ONLY_FIELDS.virtualCluster);
  const methodPath = childPath(path, 'method');
  const method = takeField(cluster, 'method');
  if (method === undefined) return;
  warnings.push(`${methodPath}: deprecated option, use headers (a :method matcher) instead`);
  const methods = schema.root.lookupEnum(REQUEST_METHOD);
  const named = enumNameInAnyCase(methods, method);
  const name = typeof named === 'number' ? methods.valuesById[named] : typeof named === 'string' && Object.hasOwn(methods.values, named) ? named : undefined;
  if (name === undefined) throw new FieldError(methodPath, `unknown enum value: ${JSON.stringify(method)}`);
  // Envoy adds no matcher for METHOD_UNSPECIFIED.
  if (methods.values[name] === 0) return;
  const headers = cluster['headers'] === undefined || cluster['headers'] === null ? [] : repeatedValues(cluster['headers']);
  if (headers.length === 0) throw new FieldError(path, "virtual clusters must define either 'pattern' or 'headers'");
  cluster['headers'] = [...headers, { name: ':method', exact_match: name }];
}

/**
 * The `cors` of a v2 virtual host or route action: allow_origin's strings become exact matches
 * before those of allow_origin_string_match, and `enabled` a fixed filter_enabled when there is
 * none, as Envoy 1.16's CorsPolicyImpl reads them.
 */
function upgradeCors(holder: JsonObject, path: string, warnings: string[]): void {
  const cors = messageField(holder, 'cors');
  if (cors === undefined) return;
  const corsPath = childPath(path, 'cors');
  refuseDroppedFields(cors, corsPath, V2_ONLY_FIELDS.cors);
  const origins = takeField(cors, 'allow_origin');
  if (origins !== undefined && origins !== null) {
    warnings.push(`${childPath(corsPath, 'allow_origin')}: deprecated option, use allow_origin_string_match instead`);
    const matchers = cors['allow_origin_string_match'];
    const listed = matchers === undefined || matchers === null ? [] : repeatedValues(matchers);
    cors['allow_origin_string_match'] = [...repeatedValues(origins).map((origin) => ({ exact: origin })), ...listed];
  }
  const enabled = takeField(cors, 'enabled');
  if (enabled === undefined || enabled === null) return;
  warnings.push(`${childPath(corsPath, 'enabled')}: deprecated option, use filter_enabled instead`);
  // A BoolValue: a bool, or {value} in its JSON object form.
  const on = isJsonObject(enabled) ? enabled['value'] === true : enabled === true;
  if (messageField(cors, 'filter_enabled') === undefined) cors['filter_enabled'] = { default_value: { numerator: on ? 100 : 0, denominator: 'HUNDRED' } };
}

/**
 * v2 `per_filter_config` (Structs by filter name) -> `typed_per_filter_config` (an Any of each
 * filter's per-route type), as Envoy 1.16 reads each Struct into that type. Envoy refuses a
 * level with both; a name that takes no per-route config is refused as validation refuses it.
 */
function typePerFilterConfig(level: JsonObject, path: string, warnings: string[], extensions: ConfigExtensions): void {
  const configPath = childPath(path, 'per_filter_config');
  const configs = takeField(level, 'per_filter_config');
  if (configs === undefined) return;
  warnings.push(`${configPath}: deprecated option, use typed_per_filter_config instead`);
  if (!isJsonObject(configs)) throw new FieldError(configPath, 'expected a map (object)');
  if (Object.keys(configs).length === 0) return;
  const typed = level['typed_per_filter_config'];
  if (isJsonObject(typed) && Object.keys(typed).length > 0) throw new UnsupportedV2FieldError(configPath, 'Only one of typed_configs or configs can be specified');
  const entries = Object.entries(configs).map(([name, struct]): [string, JsonObject] => {
    const entryPath = keyPath(configPath, name);
    const perRoute = extensions.get('proxy.filters.http', extensions.canonicalName(name))?.perRoute;
    if (perRoute === undefined) throw new UnsupportedV2FieldError(entryPath, noPerRouteConfig(name, extensions));
    if (!isJsonObject(struct)) throw new FieldError(entryPath, 'expected an object');
    return [name, { '@type': typeUrl(perRoute.configType), ...struct }];
  });
  level['typed_per_filter_config'] = Object.fromEntries(entries);
}

/** v2's one request_mirror_policy, which Envoy 1.16 mirrors to before those of request_mirror_policies. */
function moveMirrorPolicy(action: JsonObject, path: string, warnings: string[]): void {
  if (!Object.hasOwn(action, 'request_mirror_policy')) return;
  const policy = takeField(action, 'request_mirror_policy');
  if (policy === undefined) return;
  const listed = action['request_mirror_policies'];
  action['request_mirror_policies'] = [policy, ...(listed === undefined || listed === null ? [] : repeatedValues(listed))];
  warnings.push(`${childPath(path, 'request_mirror_policy')}: deprecated option, use request_mirror_policies instead`);
}

function refuseDroppedFields(message: JsonObject, path: string, dropped: ReadonlyMap<string, string>): void {
  for (const [field, successor] of dropped) {
    if (message[field] === undefined || message[field] === null) continue;
    throw new UnsupportedV2FieldError(
      childPath(path, field),
      `${field}, deprecated in v2 and dropped from v3 (${successor} replaces it), is not implemented by this build (it would be ignored)`,
    );
  }
}

/**
 * An Any whose @type names a v2 message names its v3 successor (the protos' own record of it),
 * so that the rest of the upgrade finds extensions by their v3 types.
 */
function renameTypeUrl(object: JsonObject, schema: ProtoSchema): void {
  const url = object['@type'];
  if (typeof url !== 'string') return;
  const typeName = typeNameOfUrl(url);
  const v3 = schema.v3TypeName(typeName);
  if (v3 !== typeName) object['@type'] = typeUrl(v3);
}

function renameFields(object: JsonObject, renames: ReadonlyMap<string, string>): void {
  for (const [from, to] of renames) {
    if (Object.hasOwn(object, from) && !Object.hasOwn(object, to)) {
      object[to] = object[from];
      delete object[from];
    }
  }
}

/** Removes a field and returns its value; undefined when absent or null (null means unset). */
function takeField(object: JsonObject, key: string): JsonValue | undefined {
  const value = object[key];
  delete object[key];
  return value ?? undefined;
}
