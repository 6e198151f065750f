// Reading a protobuf message from a file in the format its extension names, into JSON: the
// bootstrap (--config-path) and file-based xDS (DiscoveryResponse). The protobuf formats (.pb
// binary, .pb_text text) are v3 messages; they come out as the same canonical snake_case JSON
// that YAML and JSON decode to, so --config-yaml merges over any of them the same way. Whatever
// the format, the JSON comes out within the input limits.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as protobuf from 'protobufjs/light';
import * as protojson from 'protobufjs/ext/protojson';
import * as textformat from 'protobufjs/ext/textformat';
import { FieldError, UnknownFieldError } from './errors';
import { childPath, indexPath, keyPath } from './field_path';
import { checkInputLimits, checkInputSize, MAX_NESTING_DEPTH, NESTING_TOO_DEEP } from './input_limits';
import { JsonValue } from './json';
import { decodeProtoJson, DecodeOptions } from './proto_json';
import { ProtoSchema } from './schema';
import { parseJson, parseYaml } from './config_text';

type FileFormat = 'json' | 'yaml' | 'binary' | 'text';

const FORMAT_BY_EXTENSION: ReadonlyMap<string, FileFormat> = new Map([
  ['.json', 'json'],
  ['.yaml', 'yaml'],
  ['.yml', 'yaml'],
  ['.pb', 'binary'],
  ['.pb_text', 'text'],
]);

export interface ProtoFile {
  readonly json: JsonValue;
  /** Unknown fields of a binary file, skipped because options allowed it. */
  readonly unknownFields: readonly string[];
}

/**
 * @param type what the protobuf formats hold; JSON and YAML are returned undecoded
 * @throws FieldError for an unreadable or malformed file
 */
export function readProtoFile(filePath: string, type: protobuf.Type, schema: ProtoSchema, options: DecodeOptions): ProtoFile {
  const extension = path.extname(filePath);
  const format = FORMAT_BY_EXTENSION.get(extension);
  if (format === undefined) {
    throw new FieldError('', `unsupported file extension '${extension}': expected .json, .yaml, .yml, .pb or .pb_text`);
  }
  const file = parseFile(format, readFile(filePath), type, schema, options);
  checkInputLimits(file.json, format === 'yaml');
  return file;
}

/** Where a message decoded apart from the one holding it sits: the path and nesting depth of an Any in its response. */
export interface MessagePosition {
  readonly path: string;
  readonly depth: number;
}

function parseFile(format: FileFormat, contents: Buffer, type: protobuf.Type, schema: ProtoSchema, options: DecodeOptions): ProtoFile {
  switch (format) {
    case 'json':
      return { json: parseJson(contents.toString('utf8')), unknownFields: [] };
    case 'yaml':
      return { json: parseYaml(contents.toString('utf8')), unknownFields: [] };
    case 'binary':
      return messageAsJson(schema, type, decodeBinary(type, contents, ''), options);
    case 'text':
      return messageAsJson(schema, type, parseText(type, contents.toString('utf8')), options);
  }
}

/** The file's size is checked before anything of it is read. */
function readFile(configPath: string): Buffer {
  try {
    checkInputSize(fs.statSync(configPath).size, 'file');
    return fs.readFileSync(configPath);
  } catch (error) {
    if (error instanceof FieldError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new FieldError('', `cannot read the file (${code ?? String(error)})`);
  }
}

/**
 * A binary message (a gRPC payload), unknown fields kept for messageAsJson to report.
 * @param path where the message sits: '' for the file, the Any's path for its content
 */
export function decodeBinary(type: protobuf.Type, contents: Uint8Array, path: string): protobuf.Message {
  try {
    return type.decode(keepingUnknownFields(contents));
  } catch (error) {
    throw new FieldError(path, `not a binary ${type.fullName.slice(1)}: ${protobufReason(error)}`);
  }
}

function parseText(type: protobuf.Type, text: string): protobuf.Message {
  try {
    return textformat.fromText(type, text);
  } catch (error) {
    // protobufjs says `.<message type>: <problem> (line <n>)`.
    const message = protobufReason(error).replace(/^\.?[\w.]+: /, '');
    const line = /^(.*) \(line (\d+)\)$/.exec(message);
    throw new FieldError('', line === null ? `text format error: ${message}` : `text format error at line ${line[2]}: ${line[1]}`);
  }
}

/** A message protobufjs has decoded, as the JSON the other formats decode to. */
export function messageAsJson(
  schema: ProtoSchema,
  type: protobuf.Type,
  message: protobuf.Message,
  options: DecodeOptions,
  at: MessagePosition = { path: '', depth: 1 },
): ProtoFile {
  const unknownFields = inspectMessage(schema, type, message, at.path, at.depth);
  if (unknownFields.length > 0 && !options.allowUnknownFields) {
    throw new UnknownFieldError(unknownFields[0]!);
  }
  let printed: unknown;
  try {
    printed = protojson.toJson(type, message);
  } catch (error) {
    throw new FieldError(at.path, protobufReason(error));
  }
  // ProtoJSON prints lowerCamelCase; decoding re-keys it to the snake_case of YAML files.
  return { json: decodeProtoJson(schema, type, printed, options, at.path).json, unknownFields };
}

/**
 * Lists the unknown fields of a decoded message tree as `<path>.#<field number>`. On the way it
 * decodes every Any, so it also rewrites `proxy.` type URLs to Envoy's, which printing needs.
 * protobufjs bounds the depth of each decode, but an Any's content is a decode of its own, so
 * `depth` (messages from the root, Any content included) bounds them all together.
 */
function inspectMessage(
  schema: ProtoSchema,
  type: protobuf.Type,
  message: protobuf.Message,
  path: string,
  depth: number,
): string[] {
  if (depth > MAX_NESTING_DEPTH) throw new FieldError(path, NESTING_TOO_DEEP);
  const found = (message.$unknowns ?? []).map((raw) => childPath(path, `#${fieldNumber(raw)}`));
  const fields = message as unknown as Record<string, unknown>;
  if (type.fullName === '.google.protobuf.Any') {
    const url = fields['type_url'];
    if (typeof url !== 'string' || url === '') return found;
    const target = schema.resolveTypeUrl(url);
    if (target === undefined) throw new FieldError(childPath(path, '@type'), `unknown type '${url}'`);
    fields['type_url'] = target.typeUrl;
    const value = fields['value'];
    const inner = decodeBinary(target.type, value instanceof Uint8Array ? value : new Uint8Array(), path);
    return [...found, ...inspectMessage(schema, target.type, inner, path, depth + 1)];
  }
  for (const field of type.fieldsArray) {
    const value = fields[field.name];
    if (!(field.resolvedType instanceof protobuf.Type) || value === undefined || value === null) continue;
    const fieldType = field.resolvedType;
    const fieldPath = childPath(path, field.name);
    if (field.map) {
      for (const [key, item] of Object.entries(value as Record<string, protobuf.Message>)) {
        found.push(...inspectMessage(schema, fieldType, item, keyPath(fieldPath, key), depth + 1));
      }
    } else if (field.repeated) {
      (value as protobuf.Message[]).forEach((item, i) => {
        found.push(...inspectMessage(schema, fieldType, item, indexPath(fieldPath, i), depth + 1));
      });
    } else {
      found.push(...inspectMessage(schema, fieldType, value as protobuf.Message, fieldPath, depth + 1));
    }
  }
  return found;
}

/** protobufjs's message, its recursion limit (protoc's default) named like the input limits. */
function protobufReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\bmax depth exceeded\b/, `messages nested deeper than ${protobuf.util.recursionLimit} levels (limit)`);
}

/** A reader that keeps unknown fields in `$unknowns` (protobufjs drops them by default). */
function keepingUnknownFields(bytes: Uint8Array): protobuf.Reader {
  const reader = protobuf.Reader.create(bytes);
  reader.discardUnknown = false;
  return reader;
}

/** The field number in the tag that starts a raw field. */
function fieldNumber(raw: Uint8Array): number {
  return protobuf.Reader.create(raw).uint32() >>> 3;
}
