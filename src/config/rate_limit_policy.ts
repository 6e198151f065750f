// A virtual host's or route action's rate_limits (route.v3.RateLimit), the descriptors the rate
// limit filter (proxy.filters.http.ratelimit) sends: Envoy 1.16's actions, their rules beyond the
// protos' and their model.

import { indexPath, childPath } from './field_path';
import { HEADER_MATCHER, headerMatch, validateHeaderMatcher } from './header_matcher';
import { boolField, JsonObject, messageField, messageList, numberField, stringField } from './json';
import type { RateLimitAction, RateLimitPolicy } from './model';
import { leaf, list, refused, Shape } from './shape';

const EMPTY: Shape = { fields: {} };

// Envoy 1.16's actions. dynamic_metadata and `limit` read the stream's dynamic metadata, which
// no filter of this build writes; metadata and extension came after 1.16.
export const RATE_LIMIT: Shape = {
  fields: {
    stage: leaf,
    disable_key: leaf,
    actions: list({
      fields: {
        source_cluster: EMPTY,
        destination_cluster: EMPTY,
        request_headers: { fields: { header_name: leaf, descriptor_key: leaf, skip_if_absent: leaf } },
        remote_address: EMPTY,
        generic_key: { fields: { descriptor_value: leaf, descriptor_key: leaf } },
        header_value_match: { fields: { descriptor_value: leaf, expect_match: leaf, headers: list(HEADER_MATCHER) } },
        dynamic_metadata: refused('is not supported by this build (no filter sets dynamic metadata for it to read)'),
      },
    }),
    limit: refused('is not supported by this build (its override is read from dynamic metadata, which no filter sets)'),
  },
};

/** `config.rate_limits`: header_value_match's matchers compile (the protos check the rest). */
export function validateRateLimits(config: JsonObject, path: string): void {
  messageList(config, 'rate_limits').forEach((rateLimit, r) => {
    const actionsPath = childPath(indexPath(childPath(path, 'rate_limits'), r), 'actions');
    messageList(rateLimit, 'actions').forEach((action, a) => {
      const matchPath = childPath(indexPath(actionsPath, a), 'header_value_match');
      messageList(messageField(action, 'header_value_match') ?? {}, 'headers').forEach((matcher, h) => validateHeaderMatcher(matcher, indexPath(childPath(matchPath, 'headers'), h)));
    });
  });
}

/** `config.rate_limits` as the model's `rateLimits`; nothing when there are none. */
export function rateLimitPolicies(config: JsonObject): { rateLimits?: readonly RateLimitPolicy[] } {
  const rateLimits = messageList(config, 'rate_limits').map(
    (rateLimit): RateLimitPolicy => ({
      stage: numberField(rateLimit, 'stage'),
      disableKey: stringField(rateLimit, 'disable_key'),
      actions: messageList(rateLimit, 'actions').map(rateLimitAction),
    }),
  );
  return rateLimits.length > 0 ? { rateLimits } : {};
}

/** The protos require exactly one action specifier. */
function rateLimitAction(action: JsonObject): RateLimitAction {
  const headers = messageField(action, 'request_headers');
  if (headers !== undefined) {
    return {
      kind: 'request_headers',
      headerName: stringField(headers, 'header_name').toLowerCase(),
      descriptorKey: stringField(headers, 'descriptor_key'),
      skipIfAbsent: boolField(headers, 'skip_if_absent'),
    };
  }
  const generic = messageField(action, 'generic_key');
  if (generic !== undefined) {
    return { kind: 'generic_key', descriptorKey: stringField(generic, 'descriptor_key') || 'generic_key', descriptorValue: stringField(generic, 'descriptor_value') };
  }
  const match = messageField(action, 'header_value_match');
  if (match !== undefined) {
    return {
      kind: 'header_value_match',
      descriptorValue: stringField(match, 'descriptor_value'),
      // A BoolValue: unset is true.
      expectMatch: boolField(match, 'expect_match', true),
      headers: messageList(match, 'headers').map(headerMatch),
    };
  }
  if (messageField(action, 'source_cluster') !== undefined) return { kind: 'source_cluster' };
  if (messageField(action, 'destination_cluster') !== undefined) return { kind: 'destination_cluster' };
  return { kind: 'remote_address' };
}
