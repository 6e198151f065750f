// The HTTP connection manager's rules beyond the protos': its route table, inline or an RDS
// resource (retry policies and the HTTP filters' per-route configs included), its `rds` config
// source and its HTTP filters, each checked by its own descriptor.

import type { ConfigExtensions, ValidationContext } from '../../../config/extension';
import { FieldError } from '../../../config/errors';
import { childPath, indexPath } from '../../../config/field_path';
import { durationMs, JsonObject, messageField, messageList, numberField, stringField, stringList } from '../../../config/json';
import { ROUTER } from '../../../config/names';
import { validateConfigSource } from '../../../config/validation/config_sources';
import { requireNonNegativeDuration } from '../../../config/validation/durations';
import { compileRegexMatcher } from '../../../config/validation/stats_config';
import { validateHeaderMatcher } from '../../../config/header_matcher';
import { validateRateLimits } from '../../../config/rate_limit_policy';
import { validateStringMatchers } from '../../../config/string_match_model';
import { terminalFilterNotLast, typedConfig, unknownExtension, validateExtension, validatePerFilterConfigs } from '../../../config/validation/extensions';
import { parseRetryOn, UNSUPPORTED_RETRY_CONDITIONS } from '../../../filters/http/retry_on';
import { isValidAuthority } from '../../../http/authority';
import { InvalidRewriteError, parseRewrite } from '../../../regex/rewrite';
import { validateAccessLogs } from '../../access_loggers/access_log_list';
import { validateHeaderValueOptions } from '../../http/header_value_options';

const CONTROL_CHARACTERS = /[\x00-\x1f\x7f]/;

/** @param config the filter's typed_config, at `path` */
export function validateHttpConnectionManager(config: JsonObject, path: string, context: ValidationContext): void {
  // The protos require a stat_prefix, a route source and rds.config_source (proto_rules.ts).
  if (config['scoped_routes'] !== undefined) {
    throw new FieldError(childPath(path, 'scoped_routes'), 'scoped_routes is not supported yet; use an inline route_config or rds');
  }
  const rds = messageField(config, 'rds');
  if (rds !== undefined) {
    const rdsPath = childPath(path, 'rds');
    validateConfigSource(messageField(rds, 'config_source') ?? {}, childPath(rdsPath, 'config_source'), context.configSources);
  } else {
    validateRouteConfiguration(messageField(config, 'route_config') ?? {}, childPath(path, 'route_config'), context, true);
  }
  validateHttpFilters(config, path, context);
  requireNonNegativeDuration(config, 'stream_idle_timeout', path);
  requireNonNegativeDuration(config, 'request_timeout', path);
  const protocolOptions = messageField(config, 'common_http_protocol_options');
  if (protocolOptions !== undefined) {
    requireNonNegativeDuration(protocolOptions, 'idle_timeout', childPath(path, 'common_http_protocol_options'));
  }
  validateHttp1Options(config, path);
  validateAccessLogs(config, path, context);
  validateUpgrades(config, path, (type) => `Error: multiple upgrade configs with the same name: '${type}'`);
  const provider = messageField(messageField(config, 'tracing') ?? {}, 'provider');
  if (provider !== undefined) validateExtension('proxy.tracers', provider, childPath(childPath(path, 'tracing'), 'provider'), context);
}

/**
 * upgrade_configs of a connection manager or a route: each type named once (refused in Envoy's
 * words for each), connect_config only on CONNECT's.
 */
function validateUpgrades(config: JsonObject, path: string, duplicate: (type: string) => string): void {
  const seen = new Set<string>();
  messageList(config, 'upgrade_configs').forEach((upgrade, i) => {
    const upgradePath = indexPath(childPath(path, 'upgrade_configs'), i);
    const typePath = childPath(upgradePath, 'upgrade_type');
    const type = stringField(upgrade, 'upgrade_type').toLowerCase();
    if (type === '') throw new FieldError(typePath, 'missing required field');
    if (messageField(upgrade, 'connect_config') !== undefined && type !== 'connect') {
      throw new FieldError(childPath(upgradePath, 'connect_config'), `Non-CONNECT upgrade type ${stringField(upgrade, 'upgrade_type')} has ConnectConfig`);
    }
    if (seen.has(type)) throw new FieldError(typePath, duplicate(type));
    seen.add(type);
  });
}

/** default_host_for_http_10 becomes a request's authority: it must be one a client could send. */
function validateHttp1Options(config: JsonObject, path: string): void {
  const host = stringField(messageField(config, 'http_protocol_options') ?? {}, 'default_host_for_http_10');
  if (host !== '' && !isValidAuthority(host)) {
    throw new FieldError(childPath(childPath(path, 'http_protocol_options'), 'default_host_for_http_10'), `'${host}' is not a valid host[:port]`);
  }
}

/**
 * A RouteConfiguration at `path`: a connection manager's route_config, or an RDS resource.
 * @param context its `clusters` are those validate_clusters checks the routes' against
 * @param validateClustersByDefault validate_clusters when unset: true for an inline route_config,
 *   false for an RDS resource, as in Envoy
 */
export function validateRouteConfiguration(routeConfig: JsonObject, path: string, context: ValidationContext, validateClustersByDefault: boolean): void {
  // validate_clusters false lets a route name a cluster that CDS brings later, answered 503 until then.
  const validate = routeConfig['validate_clusters'];
  const clusters = (typeof validate === 'boolean' ? validate : validateClustersByDefault) ? context.clusters : null;
  const extensions = context.extensions;
  validateHeaderMutations(routeConfig, path);
  messageList(routeConfig, 'virtual_hosts').forEach((virtualHost, v) => {
    const hostPath = indexPath(childPath(path, 'virtual_hosts'), v);
    validateHeaderMutations(virtualHost, hostPath);
    const retryPolicy = messageField(virtualHost, 'retry_policy');
    if (retryPolicy !== undefined) validateRetryPolicy(retryPolicy, childPath(hostPath, 'retry_policy'), extensions);
    messageList(virtualHost, 'virtual_clusters').forEach((cluster, c) => validateVirtualCluster(cluster, indexPath(childPath(hostPath, 'virtual_clusters'), c)));
    validateCorsPolicy(virtualHost, hostPath);
    validateRateLimits(virtualHost, hostPath);
    validatePerFilterConfigs(virtualHost, hostPath, context);
    messageList(virtualHost, 'routes').forEach((route, r) => {
      validateRoute(route, indexPath(childPath(hostPath, 'routes'), r), clusters, context);
    });
  });
}

/** The protos require its name (proto_rules.ts); Envoy 1.16 requires a matcher too, in its words. */
function validateVirtualCluster(cluster: JsonObject, path: string): void {
  const headers = messageList(cluster, 'headers');
  if (headers.length === 0) throw new FieldError(childPath(path, 'headers'), "virtual clusters must define either 'pattern' or 'headers'");
  headers.forEach((header, i) => validateHeaderMatcher(header, indexPath(childPath(path, 'headers'), i)));
}

function validateRoute(route: JsonObject, path: string, clusters: ReadonlySet<string> | null, context: ValidationContext): void {
  // The protos require a match, and a default_value in its runtime_fraction (proto_rules.ts).
  validateRouteMatch(messageField(route, 'match') ?? {}, childPath(path, 'match'));
  validateHeaderMutations(route, path);
  validatePerFilterConfigs(route, path, context);
  const action = messageField(route, 'route');
  const redirect = messageField(route, 'redirect');
  const directResponse = messageField(route, 'direct_response');
  if (action !== undefined) {
    validateRouteAction(action, childPath(path, 'route'), clusters, context);
  } else if (redirect !== undefined) {
    validateRedirect(redirect, childPath(path, 'redirect'));
  } else if (directResponse !== undefined) {
    validateDirectResponse(directResponse, childPath(path, 'direct_response'));
  } else {
    throw new FieldError(path, 'a route, redirect or direct_response action is required (other actions are not supported yet)');
  }
}

function validateRouteMatch(match: JsonObject, path: string): void {
  const regex = messageField(match, 'safe_regex');
  if (regex !== undefined) compileRegexMatcher(regex, childPath(path, 'safe_regex'));
  messageList(match, 'headers').forEach((header, i) => validateHeaderMatcher(header, indexPath(childPath(path, 'headers'), i)));
  messageList(match, 'query_parameters').forEach((parameter, i) => {
    const regex = messageField(messageField(parameter, 'string_match') ?? {}, 'safe_regex');
    if (regex !== undefined) compileRegexMatcher(regex, childPath(childPath(indexPath(childPath(path, 'query_parameters'), i), 'string_match'), 'safe_regex'));
  });
}

/** A `cors` of `config` (a virtual host or route action): its origin regexes compile. */
function validateCorsPolicy(config: JsonObject, path: string): void {
  validateStringMatchers(messageField(config, 'cors') ?? {}, 'allow_origin_string_match', childPath(path, 'cors'));
}

function validateRouteAction(action: JsonObject, path: string, clusters: ReadonlySet<string> | null, context: ValidationContext): void {
  const extensions = context.extensions;
  validateCorsPolicy(action, path);
  validateRateLimits(action, path);
  const weighted = messageField(action, 'weighted_clusters');
  if (weighted !== undefined) {
    validateWeightedClusters(weighted, childPath(path, 'weighted_clusters'), clusters, context);
  } else if (action['cluster_header'] === undefined) {
    const cluster = stringField(action, 'cluster');
    if (cluster === '') throw new FieldError(childPath(path, 'cluster'), 'missing required field');
    if (clusters !== null && !clusters.has(cluster)) throw new FieldError(childPath(path, 'cluster'), `route: unknown cluster '${cluster}'`);
  }
  // Header names the router looks up; the protos refuse an empty one, and NUL, CR and LF only.
  for (const field of ['cluster_header', 'host_rewrite_header']) {
    if (CONTROL_CHARACTERS.test(stringField(action, field))) throw new FieldError(childPath(path, field), 'must be a header name (no control characters)');
  }
  requireNonNegativeDuration(action, 'timeout', path);
  for (const field of ['idle_timeout', 'max_grpc_timeout', 'grpc_timeout_offset']) requireNonNegativeDuration(action, field, path);
  validateHashPolicies(action, path);
  validateUpgrades(action, path, (type) => `Duplicate upgrade ${type}`);
  // Envoy 1.16's words for the one pair of rewrites it refuses together.
  if (stringField(action, 'prefix_rewrite') !== '' && messageField(action, 'regex_rewrite') !== undefined) {
    throw new FieldError(childPath(path, 'regex_rewrite'), 'Cannot specify both prefix_rewrite and regex_rewrite');
  }
  for (const field of ['regex_rewrite', 'host_rewrite_path_regex']) {
    const substitution = messageField(action, field);
    if (substitution !== undefined) validateSubstitution(substitution, childPath(path, field));
  }
  // Envoy 1.16 requires the name (min_bytes 1); a cluster that does not exist is skipped at run time, as there.
  messageList(action, 'request_mirror_policies').forEach((policy, i) => {
    if (stringField(policy, 'cluster') === '') throw new FieldError(childPath(indexPath(childPath(path, 'request_mirror_policies'), i), 'cluster'), 'missing required field');
  });
  const retryPolicy = messageField(action, 'retry_policy');
  if (retryPolicy !== undefined) validateRetryPolicy(retryPolicy, childPath(path, 'retry_policy'), extensions);
  const redirectPolicy = messageField(action, 'internal_redirect_policy');
  if (redirectPolicy !== undefined) validateInternalRedirectPolicy(redirectPolicy, childPath(path, 'internal_redirect_policy'), extensions);
}

/** Its predicates, each one this build registers with a typed_config of its type (the protos keep the rest). */
function validateInternalRedirectPolicy(policy: JsonObject, path: string, extensions: ConfigExtensions): void {
  messageList(policy, 'predicates').forEach((predicate, i) => {
    const predicatePath = indexPath(childPath(path, 'predicates'), i);
    const predicateExtension = extensions.find('proxy.internal_redirect_predicates', predicate);
    if (predicateExtension === undefined) throw new FieldError(childPath(predicatePath, 'name'), unknownExtension(stringField(predicate, 'name')));
    typedConfig(predicate, predicatePath, predicateExtension.configType ?? '');
  });
}

/** A RegexMatchAndSubstitute: its pattern as any config regex, its rewrite against the pattern's groups. */
function validateSubstitution(config: JsonObject, path: string): void {
  const regex = compileRegexMatcher(messageField(config, 'pattern') ?? {}, childPath(path, 'pattern'));
  try {
    parseRewrite(stringField(config, 'substitution'), regex.capturingGroups);
  } catch (e) {
    if (e instanceof InvalidRewriteError) throw new FieldError(childPath(path, 'substitution'), e.message);
    throw e;
  }
}

/** A cookie policy's name and path go into a Set-Cookie response header: no control characters. */
function validateHashPolicies(action: JsonObject, path: string): void {
  messageList(action, 'hash_policy').forEach((policy, i) => {
    const cookie = messageField(policy, 'cookie');
    if (cookie === undefined) return;
    for (const field of ['name', 'path']) {
      if (CONTROL_CHARACTERS.test(stringField(cookie, field))) {
        throw new FieldError(childPath(childPath(indexPath(childPath(path, 'hash_policy'), i), 'cookie'), field), 'must not contain control characters (it goes into a Set-Cookie header)');
      }
    }
  });
}

/** The protos require at least one entry, each named (proto_rules.ts). */
function validateWeightedClusters(weighted: JsonObject, path: string, clusters: ReadonlySet<string> | null, context: ValidationContext): void {
  const totalWeight = numberField(weighted, 'total_weight', 100);
  // 1.16's rule, gone from the later protos we decode: a request picks by random % total_weight.
  if (totalWeight < 1) throw new FieldError(childPath(path, 'total_weight'), 'value must be greater than or equal to 1');
  let sum = 0;
  messageList(weighted, 'clusters').forEach((entry, i) => {
    const entryPath = indexPath(childPath(path, 'clusters'), i);
    validateHeaderMutations(entry, entryPath);
    validatePerFilterConfigs(entry, entryPath, context);
    const name = stringField(entry, 'name');
    if (clusters !== null && !clusters.has(name)) throw new FieldError(childPath(entryPath, 'name'), `route: unknown weighted cluster '${name}'`);
    // Envoy 1.16 reads the weight with PROTOBUF_GET_WRAPPED_REQUIRED.
    if (entry['weight'] === undefined) throw new FieldError(childPath(entryPath, 'weight'), "Field 'weight' is missing");
    sum += numberField(entry, 'weight');
  });
  if (sum !== totalWeight) throw new FieldError(path, `Sum of weights in the weighted_cluster should add up to ${totalWeight}`);
}

/** One level's header mutations, with Envoy's reasons: pseudo-headers stay, and each value must parse. */
function validateHeaderMutations(level: JsonObject, path: string): void {
  for (const direction of ['request', 'response']) {
    validateHeaderValueOptions(level, `${direction}_headers_to_add`, path);
    stringList(level, `${direction}_headers_to_remove`).forEach((name, i) => {
      if (name.startsWith(':') || name.toLowerCase() === 'host') {
        throw new FieldError(indexPath(childPath(path, `${direction}_headers_to_remove`), i), ':-prefixed or host headers may not be removed');
      }
    });
  }
}

/** Its parts become a Location header: no control characters. The protos keep each oneof to one field. */
function validateRedirect(redirect: JsonObject, path: string): void {
  for (const field of ['scheme_redirect', 'host_redirect', 'path_redirect', 'prefix_rewrite']) {
    if (CONTROL_CHARACTERS.test(stringField(redirect, field))) {
      throw new FieldError(childPath(path, field), 'must not contain control characters (it goes into a Location header)');
    }
  }
  const port = numberField(redirect, 'port_redirect');
  if (port > 65535) throw new FieldError(childPath(path, 'port_redirect'), `${port} is not a port`);
}

/** The protos keep status within 200..599 (proto_rules.ts). */
function validateDirectResponse(response: JsonObject, path: string): void {
  const body = messageField(response, 'body');
  if (body !== undefined && body['inline_string'] === undefined && body['filename'] === undefined) {
    throw new FieldError(childPath(path, 'body'), 'an inline_string or a filename is required (inline_bytes is not supported yet)');
  }
}

function validateHttpFilters(config: JsonObject, path: string, context: ValidationContext): void {
  const filtersPath = childPath(path, 'http_filters');
  const filters = messageList(config, 'http_filters');
  filters.forEach((filter, i) => {
    const filterPath = indexPath(filtersPath, i);
    validateExtension('proxy.filters.http', filter, filterPath, context);
    const name = stringField(filter, 'name');
    if (name === ROUTER && i < filters.length - 1) {
      throw new FieldError(childPath(filterPath, 'name'), terminalFilterNotLast(name, 'http'));
    }
  });
  if (stringField(filters[filters.length - 1] ?? {}, 'name') !== ROUTER) {
    throw new FieldError(filtersPath, `the last HTTP filter must be ${ROUTER}`);
  }
}

/**
 * A route's or virtual host's retry_policy: conditions and host predicates this build honors,
 * and back-off intervals in Envoy's order.
 * @param path where `policy` (a RetryPolicy) is
 */
function validateRetryPolicy(policy: JsonObject, path: string, extensions: ConfigExtensions): void {
  for (const name of parseRetryOn(stringField(policy, 'retry_on')).unknown) {
    const reason = UNSUPPORTED_RETRY_CONDITIONS.has(name) ? 'is not implemented by this build yet (it would be ignored)' : 'is not a retry condition';
    throw new FieldError(childPath(path, 'retry_on'), `'${name}' ${reason}`);
  }
  requireNonNegativeDuration(policy, 'per_try_timeout', path);
  messageList(policy, 'retry_host_predicate').forEach((predicate, i) => {
    const predicatePath = indexPath(childPath(path, 'retry_host_predicate'), i);
    // Envoy finds a predicate by its name, else by its typed_config's type (these are not canonicalized).
    const predicateExtension = extensions.find('proxy.retry_host_predicates', predicate);
    if (predicateExtension === undefined) throw new FieldError(childPath(predicatePath, 'name'), unknownExtension(stringField(predicate, 'name')));
    typedConfig(predicate, predicatePath, predicateExtension.configType ?? '');
  });
  const backOff = messageField(policy, 'retry_back_off');
  if (backOff !== undefined) {
    const backOffPath = childPath(path, 'retry_back_off');
    // The proto requires a base interval above zero (proto_rules.ts); max_interval is optional.
    const base = durationMs(backOff, 'base_interval');
    const max = durationMs(backOff, 'max_interval');
    if (base !== undefined && max !== undefined && max < base) {
      throw new FieldError(childPath(backOffPath, 'max_interval'), 'max_interval must be greater than or equal to the base_interval');
    }
  }
}
