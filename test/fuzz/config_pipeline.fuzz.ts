// The configuration pipeline: a bootstrap (.yaml, .json, .pb, .pb_text files; YAML and JSON also
// as --config-yaml) from the shipped configs and the richest test fixtures, mutated in its bytes
// or in its tree, or built to attack the parsers (alias bombs, deep nesting). Each one loads, or
// is refused with a ConfigError naming its source (and the field, where there is one): anything
// else thrown is a crash.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as yaml from 'js-yaml';
import * as protojson from 'protobufjs/ext/protojson';
import * as textformat from 'protobufjs/ext/textformat';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import { protoSchema } from '../../src/config/schema';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { v2Bootstrap, v3Bootstrap } from '../helpers/config_fixtures';
import type { FuzzInput, FuzzSurface } from './driver';
import { below, type Json, mutateBytes, mutateJson, nested, pick, type Random } from './mutators';

const KINDS = ['yaml', 'json', 'pb', 'pb_text'] as const;
type Kind = (typeof KINDS)[number];
const SHIPPED_CONFIGS = path.resolve(__dirname, '..', '..', '..', 'configs');

export const configPipeline: FuzzSurface = {
  name: 'config_pipeline',
  timeBoundMs: 2000,
  async open() {
    const type = protoSchema().bootstrap;
    const encode = (kind: Kind, tree: Json): Buffer => {
      switch (kind) {
        case 'yaml':
          return Buffer.from(yaml.dump(tree, { noRefs: true }));
        case 'json':
          return Buffer.from(JSON.stringify(tree, null, 1));
        case 'pb':
          return Buffer.from(type.encode(protojson.fromJson(type, tree as object)).finish());
        case 'pb_text':
          return Buffer.from(textformat.toText(type, protojson.fromJson(type, tree as object)));
      }
    };
    const trees: Json[] = [
      ...fs.readdirSync(SHIPPED_CONFIGS).filter((f) => f.endsWith('.yaml')).map((f) => yaml.load(fs.readFileSync(path.join(SHIPPED_CONFIGS, f), 'utf8')) as Json),
      v3Bootstrap(),
      v2Bootstrap(),
    ];
    // The seeds in every format (a v2 bootstrap has no binary form: its fields are v2's).
    const encoded = trees.flatMap((tree) =>
      KINDS.flatMap((kind) => {
        try {
          return [{ kind, tree, bytes: encode(kind, tree) }];
        } catch {
          return [];
        }
      }),
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-fuzz-config-'));
    const extensions = builtinExtensions();
    return {
      generate(random: Random): FuzzInput {
        const seed = pick(random, encoded);
        const strategy = below(random, 10);
        if (strategy < 4) return { kind: seed.kind, bytes: mutateBytes(random, seed.bytes) };
        if (strategy < 8) {
          try {
            return { kind: seed.kind, bytes: encode(seed.kind, mutateJson(random, seed.tree)) };
          } catch {
            // protojson refused the tree for the binary formats: their bytes are mutated instead.
            return { kind: seed.kind, bytes: mutateBytes(random, seed.bytes) };
          }
        }
        return hostile(random);
      },
      run(input: FuzzInput): void {
        const allowUnknownStaticFields = skipsUnknownFields(input);
        let source: string;
        let load: () => void;
        if (input.kind !== 'pb' && input.kind !== 'pb_text' && input.bytes.length % 4 >= 2) {
          source = '--config-yaml';
          load = () => loadBootstrap({ extensions, configYaml: input.bytes.toString('utf8'), allowUnknownStaticFields });
        } else {
          source = path.join(dir, `bootstrap.${input.kind}`);
          fs.writeFileSync(source, input.bytes);
          load = () => loadBootstrap({ extensions, configPath: source, allowUnknownStaticFields });
        }
        try {
          load();
        } catch (e) {
          if (!(e instanceof ConfigError)) throw e;
          if (e.file !== source) throw new Error(`refused without its source: ${e.message}`);
        }
      },
      async close() {
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** Half the inputs are loaded as --allow-unknown-static-fields would (the other decoding path), by a bit of the input itself. */
function skipsUnknownFields(input: FuzzInput): boolean {
  return input.bytes.length % 2 === 1;
}

/** Inputs written to attack the text parsers rather than mutated from a configuration. */
function hostile(random: Random): FuzzInput {
  const n = 5 + below(random, 30);
  switch (below(random, 6)) {
    case 0: {
      // The billion laughs: each alias level multiplies the document.
      const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i < n; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
      return { kind: 'yaml', bytes: Buffer.from(`${lines.join('\n')}\nnode: {id: *a${n - 1}}\n`) };
    }
    case 1: {
      const depth = pick(random, [99, 100, 101, 1000, 100_000]);
      return { kind: pick(random, ['yaml', 'json']), bytes: Buffer.from(`${'['.repeat(depth)}${']'.repeat(random() < 0.5 ? depth : 0)}`) };
    }
    case 2: {
      const depth = pick(random, [50, 99, 100, 101, 5000]);
      return { kind: 'pb_text', bytes: Buffer.from(`${'node { metadata { fields { key: "a" value { struct_value { '.repeat(depth)}`) };
    }
    case 3:
      return { kind: pick(random, ['yaml', 'json']), bytes: Buffer.from(JSON.stringify({ node: { id: 'n', metadata: nested(random, 90 + below(random, 20)) } })) };
    case 4: {
      // Length-delimited fields claiming more bytes than there are, nested.
      const bytes = Buffer.alloc(n * 2);
      for (let i = 0; i < n; i++) bytes.set([0x0a + 8 * below(random, 4), 0xff], i * 2);
      return { kind: 'pb', bytes };
    }
    default:
      return { kind: pick(random, ['yaml', 'json', 'pb_text']), bytes: Buffer.from(`static_resources: {clusters: [{name: "${'\udc00'.repeat(n)}", connect_timeout: ${'9'.repeat(n * 10)}s}]}`) };
  }
}
