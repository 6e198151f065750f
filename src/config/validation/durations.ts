// Envoy's rule on the Duration fields the model reads that the protos leave unbounded: Envoy
// refuses any negative duration it converts (DurationUtil: "Expected positive duration"). Unset
// fields take their default and pass. Bounds the protos do state are proto_rules.ts's.

import { FieldError } from '../errors';
import { childPath } from '../field_path';
import { durationMs, JsonObject, stringField } from '../json';

/** `key` of `object` (at `path`) is not negative. */
export function requireNonNegativeDuration(object: JsonObject, key: string, path: string): void {
  const ms = durationMs(object, key);
  if (ms !== undefined && ms < 0) {
    throw new FieldError(childPath(path, key), `must not be negative, got ${stringField(object, key)}`);
  }
}
