// Envoy's rules on the Duration fields the model reads. Envoy refuses any negative duration it
// converts (DurationUtil: "Expected positive duration"), which PGV writes as `gte: {}`; some
// fields also refuse zero (`gt: {}`). Unset fields take their default and pass.

import { FieldError } from '../errors';
import { childPath } from '../field_path';
import { durationMs, JsonObject, stringField } from '../json';

/** PGV `duration: {gte: {}}`: `key` of `object` (at `path`) is not negative. */
export function requireNonNegativeDuration(object: JsonObject, key: string, path: string): void {
  const ms = durationMs(object, key);
  if (ms !== undefined && ms < 0) {
    throw new FieldError(childPath(path, key), `must not be negative, got ${stringField(object, key)}`);
  }
}

/** PGV `duration: {gt: {}}`: `key` of `object` (at `path`) is above zero. */
export function requirePositiveDuration(object: JsonObject, key: string, path: string): void {
  const ms = durationMs(object, key);
  if (ms !== undefined && ms <= 0) {
    throw new FieldError(childPath(path, key), `must be greater than 0s, got ${stringField(object, key)}`);
  }
}

/** PGV `duration: {gte: <minMs>, lt: <limitMs>}`: `key` of `object` (at `path`) is in [minMs, limitMs). */
export function requireDurationInRange(object: JsonObject, key: string, path: string, minMs: number, limitMs: number): void {
  const ms = durationMs(object, key);
  if (ms !== undefined && !(ms >= minMs && ms < limitMs)) {
    throw new FieldError(
      childPath(path, key),
      `must be at least ${readableMs(minMs)} and less than ${readableMs(limitMs)}, got ${stringField(object, key)}`,
    );
  }
}

function readableMs(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${ms / 1000}s`;
}
