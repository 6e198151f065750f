// Access log filters (Envoy 1.16's AccessLog::FilterFactory): whether a stream is logged. Built
// once per configured log; evaluate() runs per stream, on the heads as sent and received.

import { HeaderMatcher } from '../filters/http/header_matcher';
import { RequestHead } from '../http/message';
import type { RandomSource } from '../common/random';
import { DENOMINATORS } from '../runtime/fractional_percent';
import type { RuntimeSource } from '../runtime/live_runtime';
import { NOT_YET } from '../stream_info/stream_info';
import type { AccessLogFilterConfig, Comparison } from './access_log_config';
import type { FormatContext } from './format_context';
import { requestHeader } from './substitution_format';
import { grpcStatusOf } from './grpc_status';

export interface AccessLogFilter {
  evaluate(context: FormatContext): boolean;
}

export interface FilterDeps {
  readonly runtime: RuntimeSource;
  readonly random: RandomSource;
}

/** Length of a UUID request id; its 15th character carries the trace decision. */
const UUID_LENGTH = 36;
const TRACE_BYTE_POSITION = 14;
const TRACE_FORCED = '9';

export function createFilter(config: AccessLogFilterConfig, deps: FilterDeps): AccessLogFilter {
  switch (config.kind) {
    case 'status_code': {
      const compare = comparison(config.comparison, deps.runtime);
      return { evaluate: ({ info }) => compare(info.responseCode) };
    }
    case 'duration': {
      const compare = comparison(config.comparison, deps.runtime);
      // Envoy asserts the stream is complete when it is logged; one that is not has no duration to compare.
      return { evaluate: ({ info }) => info.requestComplete !== NOT_YET && compare(Math.floor(info.requestComplete)) };
    }
    case 'not_health_check':
      return { evaluate: ({ info }) => !info.healthCheck };
    case 'traceable':
      // Envoy's isTracing with a UUID request id: traced because the service forced it.
      return {
        evaluate: ({ info, request }) => {
          if (info.healthCheck) return false;
          const id = requestHeader(request, 'x-request-id');
          return id !== undefined && id.length === UUID_LENGTH && id[TRACE_BYTE_POSITION] === TRACE_FORCED;
        },
      };
    case 'runtime':
      return runtimeFilter(config, deps);
    case 'and': {
      const filters = config.filters.map((filter) => createFilter(filter, deps));
      return { evaluate: (context) => filters.every((filter) => filter.evaluate(context)) };
    }
    case 'or': {
      const filters = config.filters.map((filter) => createFilter(filter, deps));
      return { evaluate: (context) => filters.some((filter) => filter.evaluate(context)) };
    }
    case 'header': {
      const matcher = new HeaderMatcher(config.header);
      // A TCP stream has no request: Envoy matches an empty header map.
      const empty = new RequestHead('', '', false);
      return { evaluate: ({ request }) => matcher.matches(request ?? empty) };
    }
    case 'response_flag': {
      const flags = config.flags;
      return { evaluate: ({ info }) => (flags === 0 ? info.responseFlags !== 0 : (info.responseFlags & flags) !== 0) };
    }
    case 'grpc_status': {
      const statuses = new Set(config.statuses);
      const exclude = config.exclude;
      return { evaluate: (context) => statuses.has(grpcStatusOf(context)) !== exclude };
    }
  }
}

function comparison(config: Comparison, runtime: RuntimeSource): (value: number) => boolean {
  const { op, defaultValue, runtimeKey } = config;
  const threshold = () => runtime.snapshot().getInteger(runtimeKey, defaultValue);
  if (op === 'EQ') return (value) => value === threshold();
  if (op === 'GE') return (value) => value >= threshold();
  return (value) => value <= threshold();
}

/**
 * Envoy's RuntimeFilter: the runtime key's percentage (percent_sampled by default), drawn from
 * the x-request-id's first 8 hex digits unless use_independent_randomness or the id is not hex.
 */
function runtimeFilter(config: Extract<AccessLogFilterConfig, { kind: 'runtime' }>, deps: FilterDeps): AccessLogFilter {
  const denominator = DENOMINATORS[config.percentSampled.denominator];
  return {
    evaluate: ({ request }) => {
      let draw: number | null = null;
      if (!config.useIndependentRandomness) {
        const id = requestHeader(request, 'x-request-id');
        draw = id === undefined ? null : requestIdModulo(id, denominator);
      }
      return deps.runtime.snapshot().featureEnabled(config.runtimeKey, config.percentSampled, draw ?? deps.random());
    },
  };
}

const HEX8 = /^[0-9a-fA-F]{1,8}$/;

/** Envoy's UUID request id modBy: the first 8 characters as hex, modulo `modulo`; null when they are not hex. */
export function requestIdModulo(id: string, modulo: number): number | null {
  if (id.length < 8) return null;
  const head = id.slice(0, 8);
  return HEX8.test(head) ? parseInt(head, 16) % modulo : null;
}
