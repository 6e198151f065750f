// A cluster's health_checks beyond the protos' own rules, with Envoy's load-time messages:
// one check at most, hex payloads that decode, expected status ranges within 100..600, and
// no pseudo-header or host among the headers a check adds or removes, a service name regex that
// compiles.

import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageField, messageList, numberField, stringField, stringList } from '../json';
import { compileRegexMatcher } from './stats_config';

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

export function validateHealthChecks(cluster: JsonObject, clusterPath: string): void {
  const checks = messageList(cluster, 'health_checks');
  const listPath = childPath(clusterPath, 'health_checks');
  if (checks.length > 1) throw new FieldError(listPath, 'Multiple health checks not supported');
  checks.forEach((check, i) => {
    const path = indexPath(listPath, i);
    const http = messageField(check, 'http_health_check');
    if (http !== undefined) validateHttpCheck(http, childPath(path, 'http_health_check'));
    const tcp = messageField(check, 'tcp_health_check');
    if (tcp !== undefined) validateTcpCheck(tcp, childPath(path, 'tcp_health_check'));
  });
}

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

function validateTcpCheck(tcp: JsonObject, path: string): void {
  const payloads: [JsonObject, string][] = [];
  const send = messageField(tcp, 'send');
  if (send !== undefined) payloads.push([send, childPath(path, 'send')]);
  messageList(tcp, 'receive').forEach((p, i) => payloads.push([p, indexPath(childPath(path, 'receive'), i)]));
  for (const [payload, at] of payloads) {
    const text = stringField(payload, 'text');
    if (text !== '' && !HEX.test(text)) throw new FieldError(childPath(at, 'text'), `invalid hex string '${text}'`);
  }
}
