// A route's or virtual host's retry_policy: conditions and host predicates this build honors,
// and back-off intervals in Envoy's order.

import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { durationMs, JsonObject, messageField, messageList, stringField } from '../json';
import { canonicalExtensionName, CONFIG_TYPES, PREVIOUS_HOSTS, typeNameOfUrl } from '../names';
import { parseRetryOn, UNSUPPORTED_RETRY_CONDITIONS } from '../../filters/http/retry_on';
import { requireNonNegativeDuration } from './durations';
import { typedConfig, unknownExtension } from './extensions';

/** @param path where `policy` (a RetryPolicy) is */
export function validateRetryPolicy(policy: JsonObject, path: string): void {
  for (const name of parseRetryOn(stringField(policy, 'retry_on')).unknown) {
    const reason = UNSUPPORTED_RETRY_CONDITIONS.has(name) ? 'is not implemented by this build yet (it would be ignored)' : 'is not a retry condition';
    throw new FieldError(childPath(path, 'retry_on'), `'${name}' ${reason}`);
  }
  requireNonNegativeDuration(policy, 'per_try_timeout', path);
  messageList(policy, 'retry_host_predicate').forEach((predicate, i) => {
    const predicatePath = indexPath(childPath(path, 'retry_host_predicate'), i);
    const name = stringField(predicate, 'name');
    const url = stringField(messageField(predicate, 'typed_config') ?? {}, '@type');
    if (canonicalExtensionName(name) !== PREVIOUS_HOSTS && typeNameOfUrl(url) !== CONFIG_TYPES.previousHosts) {
      throw new FieldError(childPath(predicatePath, 'name'), unknownExtension(name));
    }
    typedConfig(predicate, predicatePath, CONFIG_TYPES.previousHosts);
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
