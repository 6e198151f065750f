// The Envoy v3 protobuf schema the configuration is decoded against. scripts/gen-protos.js
// writes it at build time to dist/protos.json; parsing that JSON once is far cheaper than
// parsing the .proto files it comes from. Beside it, dist/proto_annotations.json holds what the
// same .proto files say about each message: its v2 name and its validation rules.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as protobuf from 'protobufjs/light';
import { JsonObject } from './json';
import { protobufLibrary } from './protobuf_library';
import { envoyTypeName, typeNameOfUrl } from './names';

/** From dist/src/config/ to dist/. */
const DIST = path.join(__dirname, '..', '..');
const DESCRIPTOR_PATH = path.join(DIST, 'protos.json');
const ANNOTATIONS_FILE = 'proto_annotations.json';

const BOOTSTRAP_TYPE = 'envoy.config.bootstrap.v3.Bootstrap';

export interface AnyTarget {
  readonly type: protobuf.Type;
  /** The v3 type URL with Envoy's package name, the spelling the schema and /config_dump use. */
  readonly typeUrl: string;
}

/** The protoc-gen-validate rules of one message, as the .proto files write them. */
export interface MessageRules {
  /** `(validate.disabled)`: nothing of the message is checked. */
  readonly disabled?: boolean;
  /** `(validate.rules)` by field name: a FieldRules message in its ProtoJSON (snake_case) form. */
  readonly fields?: Readonly<Record<string, JsonObject>>;
  /** Oneofs marked `(validate.required)`. */
  readonly requiredOneofs?: readonly string[];
}

export interface ProtoAnnotations {
  /** `(udpa.annotations.versioning).previous_message_type`: v2 full name -> v3 full name. */
  readonly previousMessageTypes: Readonly<Record<string, string>>;
  /** By message full name; messages without rules are absent. */
  readonly rules: Readonly<Record<string, MessageRules>>;
}

export class ProtoSchema {
  readonly bootstrap: protobuf.Type;

  constructor(
    readonly root: protobuf.Root,
    readonly annotations: ProtoAnnotations,
  ) {
    this.bootstrap = root.lookupType(BOOTSTRAP_TYPE);
  }

  static load(descriptorPath = DESCRIPTOR_PATH): ProtoSchema {
    const annotationsPath = path.join(path.dirname(descriptorPath), ANNOTATIONS_FILE);
    for (const file of [descriptorPath, annotationsPath]) {
      if (!fs.existsSync(file)) {
        throw new Error(`${file} is missing: it is built by \`node scripts/gen-protos.js\` (make build)`);
      }
    }
    const root = protobufLibrary().Root.fromJSON(JSON.parse(fs.readFileSync(descriptorPath, 'utf8')));
    root.resolveAll();
    return new ProtoSchema(root, JSON.parse(fs.readFileSync(annotationsPath, 'utf8')) as ProtoAnnotations);
  }

  /**
   * The v3 name of a message type: Envoy's package for ours (`proxy.` -> `envoy.`), and the v3
   * message that replaced a v2 one (`envoy.api.v2.Cluster` -> `envoy.config.cluster.v3.Cluster`),
   * as Envoy 1.16 reads a v2 type URL wherever it reads a v3 one. Other names unchanged.
   */
  v3TypeName(typeName: string): string {
    const envoyName = envoyTypeName(typeName);
    const previous = this.annotations.previousMessageTypes;
    return Object.hasOwn(previous, envoyName) ? previous[envoyName]! : envoyName;
  }

  /**
   * The message type an Any's type URL names, or undefined when the schema does not know it.
   * The URL may name our package in place of Envoy's (`.../proxy.config.cluster.v3.Cluster`),
   * and a v2 message in place of its v3 successor.
   */
  resolveTypeUrl(typeUrl: string): AnyTarget | undefined {
    const typeName = this.v3TypeName(typeNameOfUrl(typeUrl));
    const { Type } = protobufLibrary();
    const found = this.root.lookup(`.${typeName}`, [Type]);
    if (!(found instanceof Type)) return undefined;
    return { type: found, typeUrl: typeUrl.slice(0, typeUrl.lastIndexOf('/') + 1) + typeName };
  }

  /** The validation rules of a message, by full name (without the leading dot). */
  rulesOf(typeName: string): MessageRules | undefined {
    const rules = this.annotations.rules;
    return Object.hasOwn(rules, typeName) ? rules[typeName] : undefined;
  }
}

// Loaded on first use and kept for the life of the process: the schema never changes, and
// callers that only parse options (or print --version) should not pay for it.
let loaded: ProtoSchema | undefined;

export function protoSchema(): ProtoSchema {
  loaded ??= ProtoSchema.load();
  return loaded;
}
