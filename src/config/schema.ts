// The Envoy v3 protobuf schema the configuration is decoded against. scripts/gen-protos.js
// writes it at build time to dist/protos.json; parsing that JSON once is far cheaper than
// parsing the .proto files it comes from.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as protobuf from 'protobufjs/light';
import { envoyTypeName, typeNameOfUrl } from './names';

/** From dist/src/config/ to dist/protos.json. */
const DESCRIPTOR_PATH = path.join(__dirname, '..', '..', 'protos.json');

const BOOTSTRAP_TYPE = 'envoy.config.bootstrap.v3.Bootstrap';

export interface AnyTarget {
  readonly type: protobuf.Type;
  /** The type URL with Envoy's package name, the spelling the schema and /config_dump use. */
  readonly typeUrl: string;
}

export class ProtoSchema {
  readonly bootstrap: protobuf.Type;

  constructor(readonly root: protobuf.Root) {
    this.bootstrap = root.lookupType(BOOTSTRAP_TYPE);
  }

  static load(descriptorPath = DESCRIPTOR_PATH): ProtoSchema {
    if (!fs.existsSync(descriptorPath)) {
      throw new Error(`${descriptorPath} is missing: it is built by \`node scripts/gen-protos.js\` (make build)`);
    }
    const root = protobuf.Root.fromJSON(JSON.parse(fs.readFileSync(descriptorPath, 'utf8')));
    root.resolveAll();
    return new ProtoSchema(root);
  }

  /**
   * The message type an Any's type URL names, or undefined when the schema does not know it.
   * The URL may name our package in place of Envoy's: `.../proxy.config.cluster.v3.Cluster`.
   */
  resolveTypeUrl(typeUrl: string): AnyTarget | undefined {
    const typeName = envoyTypeName(typeNameOfUrl(typeUrl));
    const found = this.root.lookup(`.${typeName}`, [protobuf.Type]);
    if (!(found instanceof protobuf.Type)) return undefined;
    return { type: found, typeUrl: typeUrl.slice(0, typeUrl.lastIndexOf('/') + 1) + typeName };
  }
}

// Loaded on first use and kept for the life of the process: the schema never changes, and
// callers that only parse options (or print --version) should not pay for it.
let loaded: ProtoSchema | undefined;

export function protoSchema(): ProtoSchema {
  loaded ??= ProtoSchema.load();
  return loaded;
}
