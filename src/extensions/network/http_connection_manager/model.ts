// The HTTP connection manager's model: its settings, its route table (inline, or where RDS
// finds it) and its HTTP filters (each by its own descriptor), Envoy 1.16's defaults filled in.

import { utf8Bytes } from '../../../common/byte_string';
import type { ConfigExtensions } from '../../../config/extension';
import { boolField, durationMs, enumField, isJsonObject, JsonObject, messageField, messageList, numberField, stringField, stringList } from '../../../config/json';
import type {
  CodecType,
  DownstreamHttp2ProtocolOptions,
  HashPolicy,
  HeaderMutations,
  HttpConnectionManagerConfig,
  InternalRedirectPolicy,
  QueryParameterMatch,
  MirrorPolicy,
  RdsConfig,
  PerFilterConfigs,
  PerRouteModel,
  RegexMatchAndSubstitute,
  RedirectAction,
  RetryPolicy,
  Route,
  RouteAction,
  RouteConfiguration,
  RouteMatch,
  RoutingPriority,
  TlsContextMatch,
  CorsPolicy,
  TlsRequirement,
  ServerHeaderTransformation,
  UpgradeSwitches,
  VirtualCluster,
  WeightedCluster,
  WeightedClusters,
} from '../../../config/model';
import {
  commonHttpProtocolOptionsOf,
  filterMetadata,
  http1ProtocolOptionsOf,
  http2ProtocolOptionsOf,
  millis,
  runtimeFraction,
} from '../../../config/model_builder';
import { configSourceOf } from '../../../config/config_source';
import { LB_METADATA_NAMESPACE, metadataMatchCriteria, type MetadataMatchCriteria } from '../../../config/metadata_match';
import { HTTP_CONNECTION_MANAGER, PREVIOUS_HOSTS } from '../../../config/names';
import { headerMatch } from '../../../config/header_matcher';
import { rateLimitPolicies } from '../../../config/rate_limit_policy';
import { stringMatch } from '../../../config/string_match_model';
import { parseRetryOn } from '../../../filters/http/retry_on';
import { accessLogsModel } from '../../access_loggers/access_log_list';
import { headerValueOptions } from '../../http/header_value_options';
import { httpTracing, routeDecorator, routeTracing } from './tracing_model';

/** Envoy 1.16's defaults for fields left unset. */
const DEFAULTS = {
  serverName: 'proxy',
  streamIdleTimeoutMs: 5 * 60 * 1000,
  requestTimeoutMs: 0,
  routeTimeoutMs: 15_000,
  numRetries: 1,
  retryBaseIntervalMs: 25,
  weightedClustersTotalWeight: 100,
} as const;

/** The connection manager's model from its validated typed_config. */
export function httpConnectionManager(config: JsonObject, extensions: ConfigExtensions): HttpConnectionManagerConfig {
  return {
    kind: 'http_connection_manager',
    name: HTTP_CONNECTION_MANAGER,
    statPrefix: stringField(config, 'stat_prefix'),
    routeConfig: routeConfiguration(messageField(config, 'route_config') ?? {}, extensions),
    rds: rdsOf(config),
    httpFilters: messageList(config, 'http_filters').map((filter) => extensions.model('proxy.filters.http', filter)),
    useRemoteAddress: boolField(config, 'use_remote_address'),
    xffNumTrustedHops: numberField(config, 'xff_num_trusted_hops'),
    // Header values: the configuration's text goes on the wire as UTF-8 (src/common/byte_string.ts).
    serverName: utf8Bytes(stringField(config, 'server_name')) || DEFAULTS.serverName,
    streamIdleTimeoutMs: millis(config, 'stream_idle_timeout', DEFAULTS.streamIdleTimeoutMs),
    requestTimeoutMs: millis(config, 'request_timeout', DEFAULTS.requestTimeoutMs),
    requestHeadersTimeoutMs: millis(config, 'request_headers_timeout', 0),
    commonHttpProtocolOptions: commonHttpProtocolOptionsOf(messageField(config, 'common_http_protocol_options') ?? {}),
    httpProtocolOptions: http1ProtocolOptionsOf(messageField(config, 'http_protocol_options') ?? {}),
    codecType: enumField<CodecType>(config, 'codec_type', 'AUTO'),
    http2ProtocolOptions: downstreamHttp2ProtocolOptions(messageField(config, 'http2_protocol_options') ?? {}),
    accessLogs: accessLogsModel(config, extensions),
    upgrades: upgradeSwitches(config),
    generateRequestId: boolField(config, 'generate_request_id', true),
    preserveExternalRequestId: boolField(config, 'preserve_external_request_id'),
    skipXffAppend: boolField(config, 'skip_xff_append'),
    via: utf8Bytes(stringField(config, 'via')),
    serverHeaderTransformation: enumField<ServerHeaderTransformation>(config, 'server_header_transformation', 'OVERWRITE'),
    normalizePath: boolField(config, 'normalize_path'),
    mergeSlashes: boolField(config, 'merge_slashes'),
    addUserAgent: boolField(config, 'add_user_agent'),
    tracing: httpTracing(config, extensions),
  };
}

/** `rds`; null for a connection manager with an inline route_config. */
function rdsOf(config: JsonObject): RdsConfig | null {
  const rds = messageField(config, 'rds');
  if (rds === undefined) return null;
  return { configSource: configSourceOf(messageField(rds, 'config_source') ?? {}), routeConfigName: stringField(rds, 'route_config_name') };
}

/** A RegexMatchAndSubstitute field of a route action as the model's `key`; nothing when unset. */
function regexSubstitution<K extends string>(action: JsonObject, field: string, key: K): { [k in K]?: RegexMatchAndSubstitute } {
  const config = messageField(action, field);
  if (config === undefined) return {};
  const substitution = { regex: stringField(messageField(config, 'pattern') ?? {}, 'regex'), substitution: stringField(config, 'substitution') };
  return { [key]: substitution } as { [k in K]?: RegexMatchAndSubstitute };
}

/** An upgrade_configs list by lower-cased type; `enabled` (a BoolValue) is true when unset. */
function upgradeSwitches(config: JsonObject): UpgradeSwitches {
  // Own properties only, whatever the names (fromEntries never touches a prototype).
  return Object.fromEntries(messageList(config, 'upgrade_configs').map((upgrade) => [stringField(upgrade, 'upgrade_type').toLowerCase(), boolField(upgrade, 'enabled', true)]));
}


/** A validated RouteConfiguration's model: a connection manager's route_config, or an RDS resource. */
export function routeConfiguration(config: JsonObject, extensions: ConfigExtensions): RouteConfiguration {
  return {
    name: stringField(config, 'name'),
    ...headerMutations(config),
    ...(boolField(config, 'most_specific_header_mutations_wins') ? { mostSpecificHeaderMutationsWins: true as const } : {}),
    ...(stringList(config, 'internal_only_headers').length > 0 ? { internalOnlyHeaders: stringList(config, 'internal_only_headers').map((name) => name.toLowerCase()) } : {}),
    virtualHosts: messageList(config, 'virtual_hosts').map((virtualHost) => {
      const hostRetry = messageField(virtualHost, 'retry_policy');
      const hostRetryPolicy = hostRetry === undefined ? null : retryPolicy(hostRetry, extensions);
      const virtualClusters = messageList(virtualHost, 'virtual_clusters').map(
        (cluster): VirtualCluster => ({ name: stringField(cluster, 'name'), headers: messageList(cluster, 'headers').map(headerMatch) }),
      );
      return {
        name: stringField(virtualHost, 'name'),
        domains: stringList(virtualHost, 'domains').map((domain) => domain.toLowerCase()),
        routes: messageList(virtualHost, 'routes').map((entry) => route(entry, hostRetryPolicy, extensions)),
        requireTls: enumField<TlsRequirement>(virtualHost, 'require_tls', 'NONE'),
        ...headerMutations(virtualHost),
        ...(boolField(virtualHost, 'include_request_attempt_count') ? { includeRequestAttemptCount: true as const } : {}),
        ...(boolField(virtualHost, 'include_attempt_count_in_response') ? { includeAttemptCountInResponse: true as const } : {}),
        ...(virtualClusters.length > 0 ? { virtualClusters } : {}),
        ...corsPolicy(virtualHost),
        ...rateLimitPolicies(virtualHost),
        ...perFilterConfigs(virtualHost, extensions),
      };
    }),
  };
}

/** @param hostRetryPolicy the virtual host's retry_policy, which a route's own replaces entirely */
function route(config: JsonObject, hostRetryPolicy: RetryPolicy | null, extensions: ConfigExtensions): Route {
  return {
    name: stringField(config, 'name'),
    match: routeMatch(messageField(config, 'match') ?? {}),
    action: routeAction(config, hostRetryPolicy, extensions),
    ...headerMutations(config),
    ...perFilterConfigs(config, extensions),
    ...routeTracing(config),
    ...routeDecorator(config),
  };
}

function routeMatch(match: JsonObject): RouteMatch {
  const prefix = match['prefix'];
  const path = match['path'];
  const regex = messageField(match, 'safe_regex');
  const fraction = messageField(match, 'runtime_fraction');
  const tls = messageField(match, 'tls_context');
  // Compared with the request's path, whose bytes are held one character each (src/common/byte_string.ts).
  return {
    ...(typeof prefix === 'string' ? { prefix: utf8Bytes(prefix) } : {}),
    ...(typeof path === 'string' ? { path: utf8Bytes(path) } : {}),
    ...(regex !== undefined ? { safeRegex: stringField(regex, 'regex') } : {}),
    caseSensitive: boolField(match, 'case_sensitive', true),
    ...(fraction !== undefined ? { runtimeFraction: runtimeFraction(fraction) } : {}),
    headers: messageList(match, 'headers').map(headerMatch),
    queryParameters: messageList(match, 'query_parameters').map((parameter): QueryParameterMatch => {
      const value = messageField(parameter, 'string_match');
      return { name: stringField(parameter, 'name'), value: value === undefined ? null : stringMatch(value) };
    }),
    grpc: messageField(match, 'grpc') !== undefined,
    ...(messageField(match, 'connect_matcher') !== undefined ? { connect: true as const } : {}),
    ...(tls !== undefined ? { tlsContext: tlsContextMatch(tls) } : {}),
  };
}

function tlsContextMatch(config: JsonObject): TlsContextMatch {
  const presented = config['presented'];
  const validated = config['validated'];
  return { ...(typeof presented === 'boolean' ? { presented } : {}), ...(typeof validated === 'boolean' ? { validated } : {}) };
}

/** A virtual host's or route action's `cors`; nothing when it has none. */
function corsPolicy(config: JsonObject): { cors?: CorsPolicy } {
  const cors = messageField(config, 'cors');
  if (cors === undefined) return {};
  const allowCredentials = cors['allow_credentials'];
  const filterEnabled = messageField(cors, 'filter_enabled');
  const shadowEnabled = messageField(cors, 'shadow_enabled');
  return {
    cors: {
      allowOrigins: messageList(cors, 'allow_origin_string_match').map(stringMatch),
      allowMethods: stringField(cors, 'allow_methods'),
      allowHeaders: stringField(cors, 'allow_headers'),
      exposeHeaders: stringField(cors, 'expose_headers'),
      maxAge: stringField(cors, 'max_age'),
      ...(typeof allowCredentials === 'boolean' ? { allowCredentials } : {}),
      ...(filterEnabled !== undefined ? { filterEnabled: runtimeFraction(filterEnabled) } : {}),
      ...(shadowEnabled !== undefined ? { shadowEnabled: runtimeFraction(shadowEnabled) } : {}),
    },
  };
}


function routeAction(config: JsonObject, hostRetryPolicy: RetryPolicy | null, extensions: ConfigExtensions): RouteAction {
  const action = messageField(config, 'route');
  const redirect = messageField(config, 'redirect');
  if (redirect !== undefined) return redirectAction(redirect);
  if (action === undefined) {
    const response = messageField(config, 'direct_response') ?? {};
    return {
      kind: 'direct_response',
      status: numberField(response, 'status'),
      body: stringField(messageField(response, 'body') ?? {}, 'inline_string'),
      bodyFile: stringField(messageField(response, 'body') ?? {}, 'filename') || null,
    };
  }
  // Sent upstream as the request's path and host: UTF-8 bytes.
  const prefixRewrite = utf8Bytes(stringField(action, 'prefix_rewrite'));
  const hostRewriteLiteral = utf8Bytes(stringField(action, 'host_rewrite_literal'));
  const hostRewriteHeader = stringField(action, 'host_rewrite_header').toLowerCase();
  const clusterHeader = stringField(action, 'cluster_header').toLowerCase();
  const metadataMatch = lbMetadataMatch(action, null);
  const weighted = messageField(action, 'weighted_clusters');
  const hashPolicies = messageList(action, 'hash_policy').flatMap(hashPolicy);
  const ownRetry = messageField(action, 'retry_policy');
  const retry = ownRetry === undefined ? hostRetryPolicy : retryPolicy(ownRetry, extensions);
  const mirrors = messageList(action, 'request_mirror_policies').map((policy): MirrorPolicy => {
    const fraction = messageField(policy, 'runtime_fraction');
    return { cluster: stringField(policy, 'cluster'), ...(fraction !== undefined ? { runtimeFraction: runtimeFraction(fraction) } : {}) };
  });
  return {
    kind: 'route',
    cluster: stringField(action, 'cluster'),
    ...(clusterHeader !== '' ? { clusterHeader } : {}),
    ...(enumField(action, 'cluster_not_found_response_code', 'SERVICE_UNAVAILABLE') === 'NOT_FOUND' ? { clusterNotFoundStatus: 404 } : {}),
    ...(weighted !== undefined ? { weightedClusters: weightedClusters(weighted, metadataMatch, extensions) } : {}),
    timeoutMs: millis(action, 'timeout', DEFAULTS.routeTimeoutMs),
    ...(durationMs(action, 'idle_timeout') !== undefined ? { idleTimeoutMs: millis(action, 'idle_timeout', 0) } : {}),
    ...(durationMs(action, 'max_grpc_timeout') !== undefined ? { maxGrpcTimeoutMs: millis(action, 'max_grpc_timeout', 0) } : {}),
    ...(durationMs(action, 'grpc_timeout_offset') !== undefined ? { grpcTimeoutOffsetMs: millis(action, 'grpc_timeout_offset', 0) } : {}),
    ...(prefixRewrite !== '' ? { prefixRewrite } : {}),
    ...regexSubstitution(action, 'regex_rewrite', 'regexRewrite'),
    ...(hostRewriteLiteral !== '' ? { hostRewriteLiteral } : {}),
    ...(hostRewriteHeader !== '' ? { hostRewriteHeader } : {}),
    ...(boolField(action, 'auto_host_rewrite') ? { autoHostRewrite: true as const } : {}),
    ...regexSubstitution(action, 'host_rewrite_path_regex', 'hostRewritePathRegex'),
    ...(hashPolicies.length > 0 ? { hashPolicies } : {}),
    ...(metadataMatch !== null ? { metadataMatch } : {}),
    priority: enumField<RoutingPriority>(action, 'priority', 'DEFAULT'),
    ...(retry !== null ? { retryPolicy: retry } : {}),
    ...(mirrors.length > 0 ? { mirrorPolicies: mirrors } : {}),
    ...(messageList(action, 'upgrade_configs').length > 0 ? { upgrades: upgradeSwitches(action) } : {}),
    ...(messageList(action, 'upgrade_configs').some((upgrade) => messageField(upgrade, 'connect_config') !== undefined) ? { terminateConnect: true as const } : {}),
    ...corsPolicy(action),
    ...internalRedirectPolicy(action, extensions),
    ...rateLimitPolicies(action),
    ...(boolField(action, 'include_vh_rate_limits') ? { includeVhRateLimits: true as const } : {}),
  };
}

/** The codes an internal redirect policy may name; Envoy drops any other. */
const INTERNAL_REDIRECT_CODES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * A route action's internal_redirect_policy; without one, as Envoy 1.16 reads the deprecated
 * fields, internal_redirect_action HANDLE_INTERNAL_REDIRECT makes a default policy with the
 * action's own max_internal_redirects. Nothing: the action passes redirects through.
 */
function internalRedirectPolicy(action: JsonObject, extensions: ConfigExtensions): { internalRedirectPolicy?: InternalRedirectPolicy } {
  const config = messageField(action, 'internal_redirect_policy');
  if (config === undefined && enumField(action, 'internal_redirect_action', 'PASS_THROUGH_INTERNAL_REDIRECT') !== 'HANDLE_INTERNAL_REDIRECT') return {};
  const policy = config ?? {};
  const codes = Array.isArray(policy['redirect_response_codes']) ? policy['redirect_response_codes'] : [];
  return {
    internalRedirectPolicy: {
      maxInternalRedirects: numberField(config === undefined ? action : policy, 'max_internal_redirects', 1),
      // An empty list means 302; a list of codes none of which counts, none.
      redirectResponseCodes: codes.length === 0 ? [302] : codes.filter((code): code is number => typeof code === 'number' && INTERNAL_REDIRECT_CODES.has(code)),
      allowCrossSchemeRedirect: boolField(policy, 'allow_cross_scheme_redirect'),
      predicates: messageList(policy, 'predicates').map((predicate) => extensions.model('proxy.internal_redirect_predicates', predicate)),
    },
  };
}

/** A level's typed_per_filter_config, each entry its filter's model, by the filter's name in our spelling; nothing when it has none. */
function perFilterConfigs(level: JsonObject, extensions: ConfigExtensions): { perFilterConfig?: PerFilterConfigs } {
  const configs = messageField(level, 'typed_per_filter_config');
  if (configs === undefined) return {};
  const models = Object.entries(configs).map(([key, config]): [string, PerRouteModel] => {
    const name = extensions.canonicalName(key);
    const perRoute = extensions.get('proxy.filters.http', name)?.perRoute;
    if (perRoute === undefined) throw new Error(`'${key}' takes no per-route config: validation admits only filters that do`);
    return [name, perRoute.model(isJsonObject(config) ? config : {})];
  });
  // Each entry's model is the one its filter's descriptor makes for its name.
  return { perFilterConfig: Object.fromEntries(models) as PerFilterConfigs };
}

/** A level's request_headers_to_add/_remove and response_headers_to_add/_remove; only those it has. */
function headerMutations(config: JsonObject): { requestHeaders?: HeaderMutations; responseHeaders?: HeaderMutations } {
  const request = mutations(config, 'request');
  const response = mutations(config, 'response');
  return { ...(request !== null ? { requestHeaders: request } : {}), ...(response !== null ? { responseHeaders: response } : {}) };
}

function mutations(config: JsonObject, direction: 'request' | 'response'): HeaderMutations | null {
  const add = headerValueOptions(config, `${direction}_headers_to_add`);
  const remove = stringList(config, `${direction}_headers_to_remove`).map((name) => name.toLowerCase());
  return add.length === 0 && remove.length === 0 ? null : { add, remove };
}

/** RedirectAction.RedirectResponseCode, by its proto name. */
const REDIRECT_STATUS: Readonly<Record<string, number>> = { MOVED_PERMANENTLY: 301, FOUND: 302, SEE_OTHER: 303, TEMPORARY_REDIRECT: 307, PERMANENT_REDIRECT: 308 };

function redirectAction(config: JsonObject): RedirectAction {
  const scheme = stringField(config, 'scheme_redirect');
  // The Location header's parts, sent as UTF-8 bytes.
  const text = (key: string): string | null => (typeof config[key] === 'string' && config[key] !== '' ? utf8Bytes(config[key] as string) : null);
  const port = numberField(config, 'port_redirect');
  return {
    kind: 'redirect',
    scheme: scheme !== '' ? scheme.toLowerCase() : boolField(config, 'https_redirect') ? 'https' : null,
    host: text('host_redirect'),
    port: port === 0 ? null : port,
    path: text('path_redirect'),
    prefixRewrite: typeof config['prefix_rewrite'] === 'string' ? utf8Bytes(config['prefix_rewrite']) : null,
    status: REDIRECT_STATUS[enumField(config, 'response_code', 'MOVED_PERMANENTLY')] ?? 301,
    stripQuery: boolField(config, 'strip_query'),
  };
}

/** @param config validated: its retry_on conditions and host predicates are ones we implement */
function retryPolicy(config: JsonObject, extensions: ConfigExtensions): RetryPolicy {
  const backOff = messageField(config, 'retry_back_off');
  // Envoy rounds intervals under 1 ms up to 1 ms.
  const baseIntervalMs = Math.max(1, backOff === undefined ? DEFAULTS.retryBaseIntervalMs : millis(backOff, 'base_interval', DEFAULTS.retryBaseIntervalMs));
  const maxIntervalMs = backOff === undefined ? 10 * baseIntervalMs : Math.max(1, millis(backOff, 'max_interval', 10 * baseIntervalMs));
  return {
    retryOn: parseRetryOn(stringField(config, 'retry_on')).flags,
    numRetries: numberField(config, 'num_retries', DEFAULTS.numRetries),
    perTryTimeoutMs: millis(config, 'per_try_timeout', 0),
    retriableStatusCodes: Array.isArray(config['retriable_status_codes']) ? config['retriable_status_codes'].filter((code): code is number => typeof code === 'number') : [],
    avoidPreviousHosts: messageList(config, 'retry_host_predicate').some((predicate) => extensions.model('proxy.retry_host_predicates', predicate).name === PREVIOUS_HOSTS),
    hostSelectionRetryMaxAttempts: numberField(config, 'host_selection_retry_max_attempts'),
    baseIntervalMs,
    maxIntervalMs,
  };
}

function weightedClusters(config: JsonObject, routeMatch: MetadataMatchCriteria | null, extensions: ConfigExtensions): WeightedClusters {
  const prefix = stringField(config, 'runtime_key_prefix');
  return {
    clusters: messageList(config, 'clusters').map((entry): WeightedCluster => {
      const name = stringField(entry, 'name');
      // An entry without criteria of its own uses the route's.
      const metadataMatch = lbMetadataMatch(entry, routeMatch) ?? routeMatch;
      return {
        name,
        weight: numberField(entry, 'weight'),
        runtimeKey: `${prefix}.${name}`,
        ...(metadataMatch !== null ? { metadataMatch } : {}),
        ...headerMutations(entry),
        ...perFilterConfigs(entry, extensions),
      };
    }),
    totalWeight: numberField(config, 'total_weight', DEFAULTS.weightedClustersTotalWeight),
  };
}

/** The `proxy.lb` criteria of a message's metadata_match merged over `parent`; null when it has none. */
function lbMetadataMatch(config: JsonObject, parent: MetadataMatchCriteria | null): MetadataMatchCriteria | null {
  const metadataMatch = messageField(config, 'metadata_match');
  if (metadataMatch === undefined) return null;
  const fields = filterMetadata(metadataMatch)[LB_METADATA_NAMESPACE];
  return isJsonObject(fields) ? metadataMatchCriteria(fields, parent) : null;
}

/** One of Envoy's hash methods; connection_properties without source_ip is none (Envoy skips it). */
function hashPolicy(config: JsonObject): HashPolicy[] {
  const terminal = boolField(config, 'terminal');
  const header = messageField(config, 'header');
  if (header !== undefined) return [{ kind: 'header', name: stringField(header, 'header_name').toLowerCase(), terminal }];
  const cookie = messageField(config, 'cookie');
  if (cookie !== undefined) {
    // Envoy keeps the ttl's whole seconds.
    const ttlMs = durationMs(cookie, 'ttl');
    const ttlSeconds = ttlMs === undefined ? null : Math.trunc(ttlMs / 1000);
    return [{ kind: 'cookie', name: stringField(cookie, 'name'), ttlSeconds, path: stringField(cookie, 'path'), terminal }];
  }
  const properties = messageField(config, 'connection_properties');
  if (properties !== undefined) return boolField(properties, 'source_ip') ? [{ kind: 'source_ip', terminal }] : [];
  const query = messageField(config, 'query_parameter');
  if (query !== undefined) return [{ kind: 'query_parameter', name: stringField(query, 'name'), terminal }];
  const filterState = messageField(config, 'filter_state');
  // Validation requires one of the kinds.
  return filterState !== undefined ? [{ kind: 'filter_state', key: stringField(filterState, 'key'), terminal }] : [];
}

/** A connection manager's http2_protocol_options: the flood limits with Envoy 1.16's defaults (codec_impl.h). */
export function downstreamHttp2ProtocolOptions(config: JsonObject): DownstreamHttp2ProtocolOptions {
  return {
    ...http2ProtocolOptionsOf(config)!,
    allowConnect: boolField(config, 'allow_connect'),
    floodLimits: {
      maxOutboundFrames: numberField(config, 'max_outbound_frames', 10000),
      maxOutboundControlFrames: numberField(config, 'max_outbound_control_frames', 1000),
      maxConsecutiveInboundFramesWithEmptyPayload: numberField(config, 'max_consecutive_inbound_frames_with_empty_payload', 1),
      maxInboundPriorityFramesPerStream: numberField(config, 'max_inbound_priority_frames_per_stream', 100),
      maxInboundWindowUpdateFramesPerDataFrameSent: numberField(config, 'max_inbound_window_update_frames_per_data_frame_sent', 10),
    },
  };
}
