// A test resource (ProtoJSON with `@type`) as the google.protobuf.Any a management server sends:
// its type URL kept as written (a v2 URL too), its content encoded with the type it resolves to.

import * as protojson from 'protobufjs/ext/protojson';
import type { JsonObject } from '../../src/config/json';
import type { ProtoSchema } from '../../src/config/schema';

export function encodeAny(schema: ProtoSchema, resource: JsonObject): { type_url: string; value: Uint8Array } {
  const { '@type': url, ...fields } = resource;
  const target = schema.resolveTypeUrl(String(url));
  if (target === undefined) throw new Error(`unknown resource type ${String(url)}`);
  return { type_url: String(url), value: target.type.encode(protojson.fromJson(target.type, fields)).finish() };
}
