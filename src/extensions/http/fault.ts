// proxy.filters.http.fault (src/filters/http/fault.ts): HTTPFault's fields this build acts on,
// the rules Envoy adds to the protos', and its model with Envoy's default runtime keys.

import type { ExtensionDescriptor } from '../../config/extension';
import { HEADER_MATCHER, headerMatch, validateHeaderMatcher } from '../../config/header_matcher';
import { childPath, indexPath } from '../../config/field_path';
import { boolField, JsonObject, messageField, messageList, numberField, stringField, stringList } from '../../config/json';
import type { FaultAbort, FaultConfig, FaultDelay, FaultRateLimit, FaultRuntimeKeys, FractionalPercent } from '../../config/model';
import { fractionalPercent, millis } from '../../config/model_builder';
import { CONFIG_TYPES, FAULT } from '../../config/names';
import { leaf, list, type Shape } from '../../config/shape';
import type { DataPlaneFactories } from '../data_plane_factories';

/** HTTPFault, as this build honours it; filter_metadata (after 1.16) is refused. */
const HTTP_FAULT: Shape = {
  fields: {
    // `type` is deprecated; FIXED, its only value, is what fixed_delay does.
    delay: { fields: { fixed_delay: leaf, header_delay: leaf, percentage: leaf, type: leaf } },
    abort: { fields: { http_status: leaf, grpc_status: leaf, header_abort: leaf, percentage: leaf } },
    upstream_cluster: leaf,
    headers: list(HEADER_MATCHER),
    downstream_nodes: leaf,
    max_active_faults: leaf,
    response_rate_limit: { fields: { fixed_limit: leaf, header_limit: leaf, percentage: leaf } },
    delay_percent_runtime: leaf,
    abort_percent_runtime: leaf,
    delay_duration_runtime: leaf,
    abort_http_status_runtime: leaf,
    abort_grpc_status_runtime: leaf,
    max_active_faults_runtime: leaf,
    response_rate_limit_percent_runtime: leaf,
    disable_downstream_cluster_stats: leaf,
  },
};

export const FAULT_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: FAULT,
  aliases: ['envoy.fault'],
  configType: CONFIG_TYPES.fault,
  shape: HTTP_FAULT,
  validate: validateFault,
  model: (config) => ({ name: FAULT, fault: faultConfig(config) }),
  factory: (config, context) => {
    if (config.fault === undefined) return null;
    const { FaultFilterFactory } = require('../../filters/http/fault') as typeof import('../../filters/http/fault');
    return new FaultFilterFactory(config.fault, context);
  },
  // A route's HTTPFault replaces the filter's whole (Envoy's per-route FaultSettings).
  perRoute: { configType: CONFIG_TYPES.fault, shape: HTTP_FAULT, validate: validateFault, model: faultConfig },
};

function validateFault(config: JsonObject, path: string): void {
  messageList(config, 'headers').forEach((matcher, i) => validateHeaderMatcher(matcher, indexPath(childPath(path, 'headers'), i)));
}

export function faultConfig(config: JsonObject): FaultConfig {
  return {
    delay: delay(messageField(config, 'delay')),
    abort: abort(messageField(config, 'abort')),
    upstreamCluster: stringField(config, 'upstream_cluster'),
    headers: messageList(config, 'headers').map(headerMatch),
    downstreamNodes: stringList(config, 'downstream_nodes'),
    maxActiveFaults: config['max_active_faults'] === undefined ? null : numberField(config, 'max_active_faults'),
    responseRateLimit: rateLimit(messageField(config, 'response_rate_limit')),
    runtimeKeys: runtimeKeys(config),
    disableDownstreamClusterStats: boolField(config, 'disable_downstream_cluster_stats'),
  };
}

/** An unset percentage is 0%: only the runtime turns such a fault on. */
function percentage(config: JsonObject): FractionalPercent {
  return fractionalPercent(messageField(config, 'percentage') ?? {});
}

function delay(config: JsonObject | undefined): FaultDelay | null {
  if (config === undefined) return null;
  return { fixedMs: messageField(config, 'header_delay') !== undefined ? null : millis(config, 'fixed_delay', 0), percentage: percentage(config) };
}

function abort(config: JsonObject | undefined): FaultAbort | null {
  if (config === undefined) return null;
  const kind = messageField(config, 'header_abort') !== undefined ? 'header' : config['grpc_status'] !== undefined ? 'grpc' : 'http';
  const status = kind === 'grpc' ? numberField(config, 'grpc_status') : kind === 'http' ? numberField(config, 'http_status') : 0;
  return { kind, status, percentage: percentage(config) };
}

function rateLimit(config: JsonObject | undefined): FaultRateLimit | null {
  if (config === undefined) return null;
  const fixed = messageField(config, 'fixed_limit');
  return { fixedKbps: fixed === undefined ? null : numberField(fixed, 'limit_kbps'), percentage: percentage(config) };
}

function runtimeKeys(config: JsonObject): FaultRuntimeKeys {
  const key = (field: string, fallback: string): string => stringField(config, field) || fallback;
  return {
    delayPercent: key('delay_percent_runtime', 'fault.http.delay.fixed_delay_percent'),
    abortPercent: key('abort_percent_runtime', 'fault.http.abort.abort_percent'),
    delayDuration: key('delay_duration_runtime', 'fault.http.delay.fixed_duration_ms'),
    abortHttpStatus: key('abort_http_status_runtime', 'fault.http.abort.http_status'),
    abortGrpcStatus: key('abort_grpc_status_runtime', 'fault.http.abort.grpc_status'),
    maxActiveFaults: key('max_active_faults_runtime', 'fault.http.max_active_faults'),
    responseRateLimitPercent: key('response_rate_limit_percent_runtime', 'fault.http.rate_limit.response_percent'),
  };
}
