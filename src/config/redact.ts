// Envoy's MessageUtil::redact for /config_dump: below a field marked (udpa.annotations.sensitive),
// every string and bytes value becomes "[redacted]" and every other scalar is cleared, however
// deep; messages, lists, maps and Any (by its @type) are walked. TLS private keys, passwords and
// SDS secrets are such fields. Pure: canonical v3 JSON in, a redacted copy out.

import * as protobuf from 'protobufjs/light';
import { isJsonObject, JsonObject, JsonValue } from './json';
import type { ProtoSchema } from './schema';

const SENSITIVE = '(udpa.annotations.sensitive)';
const REDACTED = '[redacted]';
/** "[redacted]" as a bytes value, which proto JSON writes in base64. */
const REDACTED_BYTES = Buffer.from(REDACTED).toString('base64');
const ANY = '.google.protobuf.Any';

export function redactSensitive(schema: ProtoSchema, type: protobuf.Type, message: JsonObject): JsonObject {
  return redactMessage(schema, type, message, false);
}

function redactMessage(schema: ProtoSchema, type: protobuf.Type, message: JsonObject, sensitive: boolean): JsonObject {
  if (type.fullName === ANY) {
    const target = typeof message['@type'] === 'string' ? schema.resolveTypeUrl(message['@type']) : undefined;
    // An Any of a type the schema does not know cannot be walked: drop its content when it is sensitive.
    if (target === undefined) return sensitive ? { '@type': message['@type'] ?? null } : message;
    const { '@type': url, ...fields } = message;
    return { '@type': url!, ...redactMessage(schema, target.type, fields, sensitive) };
  }
  const out: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(message)) {
    const field = type.fields[key];
    if (field === undefined) {
      out[key] = value;
      continue;
    }
    const inner = sensitive || field.options?.[SENSITIVE] === true;
    const redacted = redactValue(schema, field, value, inner, field.repeated || field.map);
    if (redacted !== undefined) out[key] = redacted;
  }
  return out;
}

/** A field's value (a list or map when `many`); undefined when it is cleared. */
function redactValue(schema: ProtoSchema, field: protobuf.Field, value: JsonValue, sensitive: boolean, many: boolean): JsonValue | undefined {
  if (many && Array.isArray(value)) return value.map((v) => redactValue(schema, field, v, sensitive, false) ?? null);
  if (many && field.map && isJsonObject(value)) {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = redactValue(schema, field, v, sensitive, false);
      if (r !== undefined) out[k] = r;
    }
    return out;
  }
  const resolved = field.resolvedType instanceof protobuf.Type ? field.resolvedType.fullName : null;
  // Well-known types (Duration, Struct, wrappers) print as leaves: treated as the scalars they hold.
  if (resolved !== null && isJsonObject(value) && (resolved === ANY || !resolved.startsWith('.google.protobuf.'))) {
    return redactMessage(schema, field.resolvedType as protobuf.Type, value, sensitive);
  }
  if (!sensitive) return value;
  if (field.type === 'string' || resolved === '.google.protobuf.StringValue') return REDACTED;
  if (field.type === 'bytes' || resolved === '.google.protobuf.BytesValue') return REDACTED_BYTES;
  return undefined;
}
