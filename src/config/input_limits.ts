// Bounds on the size and shape of configuration input, so that no file can exhaust or crash the
// proxy. A file's size is checked before it is read. The stages after parsing (merge, v2 upgrade,
// proto decoding, validation) walk the tree recursively and in full, and copy its strings, so its
// depth, its size with YAML aliases followed, and the length of its strings are checked first.

import { FieldError } from './errors';
import { childPath, indexPath } from './field_path';
import { JsonValue } from './json';

/**
 * Levels of nested objects and lists, the root object being the first. Protobuf's default
 * recursion limit (protoc's, and protobufjs's for .pb and .pb_text) is the same number; no real
 * bootstrap comes near it, while recursive stages overflow the stack some thousands deeper.
 */
export const MAX_NESTING_DEPTH = 100;

/**
 * Values that YAML aliases add to the tree. js-yaml returns an alias as a reference to the
 * anchored value, so a few hundred bytes of nested aliases stand for billions of values
 * ("billion laughs") that every later stage would visit one by one. A million keeps that under
 * about a second and a hundred megabytes, far above any real reuse of anchors.
 */
export const MAX_ALIAS_EXPANSION = 1_000_000;

/**
 * Bytes of one configuration file (a bootstrap, a file-based xDS response) or --config-yaml. A
 * bootstrap of 10,000 clusters is a few megabytes, a file of 100,000 endpoints about twenty; the
 * parsers take about a second over 64 MiB, and the stages after them many more.
 */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Characters of one string (a value or a key). The longest in real configurations are inline
 * data sources, PEM bundles (the public CA bundle is about 250 KB) and scripts: 4 Mi is well over
 * ten times that, while a 64 Mi one cost the later stages, which copy it, 2 GB and 20 seconds.
 */
export const MAX_STRING_LENGTH = 4 * 1024 * 1024;

export const NESTING_TOO_DEEP = `nesting deeper than ${MAX_NESTING_DEPTH} levels (limit)`;
const ALIASES_EXPAND_TOO_MUCH = `YAML aliases expand to more than ${MAX_ALIAS_EXPANSION} values (limit)`;

/** @throws FieldError (at the root) when the input text or file is over MAX_FILE_BYTES */
export function checkInputSize(bytes: number, what: string): void {
  if (bytes > MAX_FILE_BYTES) throw new FieldError('', `${what} of ${bytes} bytes, larger than ${MAX_FILE_BYTES} (limit)`);
}

function stringTooLong(what: string, length: number): string {
  return `${what} of ${length} characters, longer than ${MAX_STRING_LENGTH} (limit)`;
}

/**
 * @param shared whether the tree may hold one collection at several places (YAML aliases); a
 *   tree parsed from JSON or a protobuf cannot, and only its depth is checked
 * @throws FieldError at the first value past a limit
 */
export function checkInputLimits(root: JsonValue, shared = true): void {
  new InputWalk(shared).visit(root, 1);
}

/** A collection as the later stages see it: its values (itself included) and its levels. */
interface Extent {
  readonly values: number;
  readonly levels: number;
}

const SCALAR: Extent = { values: 1, levels: 0 };

/**
 * Walks the tree as the DAG it is: a collection met again (an alias) adds its extent without
 * being walked again, so the walk costs what the text does, not what it expands to. A cycle
 * (an alias inside its own anchor) is never completed, so it ends at the depth limit.
 */
class InputWalk {
  private readonly seen = new Map<object, Extent>();
  private aliased = 0;
  /** Keys and indexes from the root to the value being visited, for the error's path. */
  private readonly trail: Array<string | number> = [];

  constructor(private readonly shared: boolean) {}

  visit(value: JsonValue, depth: number): Extent {
    if (typeof value === 'string' && value.length > MAX_STRING_LENGTH) throw new FieldError(this.path(), stringTooLong('a string', value.length));
    if (value === null || typeof value !== 'object') return SCALAR;
    const known = this.shared ? this.seen.get(value) : undefined;
    if (known !== undefined) {
      this.aliased += known.values;
      if (this.aliased > MAX_ALIAS_EXPANSION) throw new FieldError(this.path(), ALIASES_EXPAND_TOO_MUCH);
      if (depth + known.levels - 1 > MAX_NESTING_DEPTH) throw new FieldError(this.path(), NESTING_TOO_DEEP);
      return known;
    }
    if (depth > MAX_NESTING_DEPTH) throw new FieldError(this.path(), NESTING_TOO_DEEP);
    let values = 1;
    let levels = 0;
    // No entries arrays: a bootstrap of 10,000 clusters has a million values.
    const visitChild = (key: string | number, child: JsonValue) => {
      // The key is not part of the error's path: a path that long is no help.
      if (typeof key === 'string' && key.length > MAX_STRING_LENGTH) throw new FieldError(this.path(), stringTooLong('a key', key.length));
      this.trail.push(key);
      const extent = this.visit(child, depth + 1);
      this.trail.pop();
      values += extent.values;
      if (extent.levels > levels) levels = extent.levels;
    };
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) visitChild(i, value[i]!);
    else for (const key in value) visitChild(key, value[key]!);
    const extent = { values, levels: levels + 1 };
    if (this.shared) this.seen.set(value, extent);
    return extent;
  }

  private path(): string {
    return this.trail.reduce<string>((path, key) => (typeof key === 'number' ? indexPath(path, key) : childPath(path, key)), '');
  }
}
