// A filter's type.v3.HttpStatus reply status as Envoy 1.16's filters read it (toErrorCode): the
// configured StatusCode when it is an error (400 or more), the filter's own default otherwise.

import { JsonObject, stringField } from '../../config/json';
import { protoSchema } from '../../config/schema';

/** @param status the HttpStatus message; undefined when unset */
export function errorStatus(status: JsonObject | undefined, fallback: number): number {
  const name = stringField(status ?? {}, 'code');
  const code = name === '' ? 0 : (protoSchema().root.lookupEnum('envoy.type.v3.StatusCode').values[name] ?? 0);
  return code >= 400 ? code : fallback;
}
