// HealthCheck.http_health_check: an HTTP/1.1 GET per check
// (src/upstream/supervisor/health_check/http_probe.ts), with Envoy's load-time rules: expected
// status ranges within 100..600, no pseudo-header or host among the headers a check adds or
// removes, a service name regex that compiles. HTTP/2 and HTTP/3 checks and the check's
// send/receive (not implemented in Envoy) are refused.

import { utf8Bytes } from '../../common/byte_string';
import type { ExtensionDescriptor } from '../../config/extension';
import { STRING_MATCHER } from '../../config/common_shapes';
import { FieldError } from '../../config/errors';
import { childPath, indexPath } from '../../config/field_path';
import { boolField, JsonObject, messageField, messageList, numberField, stringField, stringList } from '../../config/json';
import type { HttpHealthCheck } from '../../config/model';
import { leaf, list } from '../../config/shape';
import { stringMatch } from '../../config/string_match_model';
import { compileRegexMatcher } from '../../config/validation/stats_config';
import { HTTP_CHECKER, type HealthCheckerFactory } from '../../upstream/supervisor/health_check/health_checkers';

/** Envoy's expected_statuses when none is configured: 200 only. */
const EXPECTED_STATUSES: HttpHealthCheck['expectedStatuses'] = [[200, 201]];

export const HTTP_HEALTH_CHECKER: ExtensionDescriptor<'proxy.health_checkers', HealthCheckerFactory> = {
  category: 'proxy.health_checkers',
  name: 'http_health_check',
  configType: null,
  shape: {
    fields: {
      host: leaf,
      path: leaf,
      expected_statuses: list({ fields: { start: leaf, end: leaf } }),
      request_headers_to_add: list({ fields: { header: { fields: { key: leaf, value: leaf } }, append: leaf } }),
      request_headers_to_remove: leaf,
      service_name_matcher: STRING_MATCHER,
      codec_client_type: leaf,
    },
    values: { codec_client_type: ['HTTP1'] },
  },
  validate: validateHttpCheck,
  model: (http): HttpHealthCheck => {
    const ranges = messageList(http, 'expected_statuses').map((r) => [numberField(r, 'start'), numberField(r, 'end')] as const);
    const matcher = messageField(http, 'service_name_matcher');
    // What goes into the request is bytes: the configuration's text as UTF-8 (src/common/byte_string.ts).
    return {
      kind: 'http',
      host: utf8Bytes(stringField(http, 'host')),
      path: utf8Bytes(stringField(http, 'path')),
      expectedStatuses: ranges.length > 0 ? ranges : EXPECTED_STATUSES,
      requestHeadersToAdd: messageList(http, 'request_headers_to_add').map((option) => {
        const header = messageField(option, 'header') ?? {};
        return { key: stringField(header, 'key'), value: utf8Bytes(stringField(header, 'value')), append: boolField(option, 'append', true) };
      }),
      requestHeadersToRemove: stringList(http, 'request_headers_to_remove').map((name) => name.toLowerCase()),
      serviceNameMatcher: matcher === undefined ? null : stringMatch(matcher),
    };
  },
  factory: HTTP_CHECKER,
};

function validateHttpCheck(http: JsonObject, path: string): void {
  const regex = messageField(messageField(http, 'service_name_matcher') ?? {}, 'safe_regex');
  if (regex !== undefined) compileRegexMatcher(regex, childPath(childPath(path, 'service_name_matcher'), 'safe_regex'));
  messageList(http, 'expected_statuses').forEach((range, i) => {
    const start = numberField(range, 'start');
    const end = numberField(range, 'end');
    const at = indexPath(childPath(path, 'expected_statuses'), i);
    if (start >= end) throw new FieldError(at, `Invalid http status range: expecting start < end, but found start=${start} and end=${end}`);
    if (start < 100) throw new FieldError(at, `Invalid http status range: expecting start >= 100, but found start=${start}`);
    if (end > 600) throw new FieldError(at, `Invalid http status range: expecting end <= 600, but found end=${end}`);
  });
  stringList(http, 'request_headers_to_remove').forEach((name, i) => {
    if (name.startsWith(':') || name.toLowerCase() === 'host') {
      throw new FieldError(indexPath(childPath(path, 'request_headers_to_remove'), i), ':-prefixed or host headers may not be removed');
    }
  });
  messageList(http, 'request_headers_to_add').forEach((option, i) => {
    const header = messageField(option, 'header') ?? {};
    if (stringField(header, 'key').startsWith(':')) {
      throw new FieldError(childPath(childPath(indexPath(childPath(path, 'request_headers_to_add'), i), 'header'), 'key'), ':-prefixed headers may not be modified');
    }
    const value = stringField(header, 'value');
    // Envoy expands %...% formatters (request info, upstream metadata) in these values; this build
    // sends values as written, so a formatter would go out literally.
    if (value.includes('%')) {
      const at = childPath(childPath(indexPath(childPath(path, 'request_headers_to_add'), i), 'header'), 'value');
      throw new FieldError(at, 'header value formatters (%...%) are not implemented by this build yet');
    }
  });
}
