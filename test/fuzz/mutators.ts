// Mutations shared by the fuzzers: of bytes (flips, inserted and deleted spans, repeated spans,
// interesting values spliced in) and of JSON trees (type swaps, huge numbers, deep nesting,
// invalid UTF-8). Each takes the input's random stream, so a mutation is reproducible.

export type Random = () => number;

export function below(random: Random, n: number): number {
  return Math.floor(random() * n);
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[below(random, items.length)]!;
}

/** Values that break parsers: limits of integer widths, floats out of range, signs, encodings. */
export const INTERESTING_TEXT: readonly string[] = [
  '0', '-1', '4294967295', '4294967296', '18446744073709551616', '9007199254740993', '-9223372036854775809',
  '1e400', '-1e400', 'NaN', 'Infinity', '0x10', '1.5', '""', 'null', 'true', '[]', '{}', '\u0000', '\ufeff',
  '\ud800', '%00', '%ff', '%', '\\', '"', "'", '*', '&a', '!!binary', '<<', '\r\n', '\n', ' ', '\t', '#', ':', ',',
  'a'.repeat(4096), '9'.repeat(400),
];

const INTERESTING_BYTES: readonly Buffer[] = [
  Buffer.from([0xff, 0xfe]), Buffer.from([0xc0, 0x80]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0x80]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]), Buffer.from([0]), Buffer.from([0xff, 0xff, 0xff, 0xff]),
  Buffer.from([0x7f, 0xff, 0xff, 0xff]), Buffer.from([0x80, 0, 0, 0]),
];

/** One to `rounds` byte-level mutations of `bytes`. */
export function mutateBytes(random: Random, bytes: Buffer, rounds = 4): Buffer {
  let out: Buffer = Buffer.from(bytes);
  const n = 1 + below(random, rounds);
  for (let r = 0; r < n; r++) out = mutateOnce(random, out);
  return out;
}

function mutateOnce(random: Random, b: Buffer): Buffer {
  const at = below(random, b.length + 1);
  const span = Math.min(b.length - at, 1 + below(random, 32));
  switch (below(random, 8)) {
    case 0: {
      if (b.length === 0) return Buffer.from([below(random, 256)]);
      const i = below(random, b.length);
      b[i] = b[i]! ^ (1 << below(random, 8));
      return b;
    }
    case 1:
      if (b.length === 0) return b;
      b[below(random, b.length)] = below(random, 256);
      return b;
    case 2:
      return Buffer.concat([b.subarray(0, at), b.subarray(at + span)]);
    case 3: {
      const from = below(random, b.length + 1);
      const piece = b.subarray(from, from + 1 + below(random, 64));
      return Buffer.concat([b.subarray(0, at), piece, b.subarray(at)]);
    }
    case 4:
      return Buffer.concat([b.subarray(0, at), Buffer.from(pick(random, INTERESTING_TEXT)), b.subarray(at + (random() < 0.5 ? span : 0))]);
    case 5:
      return Buffer.concat([b.subarray(0, at), pick(random, INTERESTING_BYTES), b.subarray(at)]);
    case 6: {
      const piece = b.subarray(at, at + span);
      return Buffer.concat([b.subarray(0, at), ...Array.from({ length: 1 + below(random, 16) }, () => piece), b.subarray(at)]);
    }
    default:
      return b.subarray(0, at);
  }
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A copy of `value` with one to `rounds` of its nodes replaced by something of another type, size or encoding. */
export function mutateJson(random: Random, value: Json, rounds = 3): Json {
  let out = structuredClone(value);
  const n = 1 + below(random, rounds);
  for (let r = 0; r < n; r++) out = replaceNode(random, out, 0);
  return out;
}

function replaceNode(random: Random, node: Json, depth: number): Json {
  const children = node !== null && typeof node === 'object' ? (Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node)) : [];
  if (children.length > 0 && random() < 0.8 - depth * 0.02) {
    const key = pick<string | number>(random, children);
    const container = node as Record<string | number, Json>;
    container[key] = replaceNode(random, container[key]!, depth + 1);
    return node;
  }
  if (random() < 0.15 && node !== null && typeof node === 'object' && !Array.isArray(node)) {
    // An unknown or misspelt key.
    return { ...node, [pick(random, ['bogus', '@type', 'name', 'typed_config', 'port_value', 'a'.repeat(300)])]: otherValue(random, node) };
  }
  return otherValue(random, node);
}

function otherValue(random: Random, node: Json): Json {
  switch (below(random, 10)) {
    case 0:
      return pick<Json>(random, [null, true, false, 0, -1, 4294967296, 1e308, -1e308, 2 ** 53 + 2, 0.5, '', '0', '-1', '1e400', 'NaN']);
    case 1:
      return [node];
    case 2:
      return { value: node };
    case 3:
      return nested(random, 20 + below(random, 200));
    case 4:
      return '\ud800' + String(node);
    case 5:
      return typeof node === 'string' && node.length < 4096 ? node.repeat(1 + below(random, 1000)) : String(node);
    case 6:
      return typeof node === 'number' ? -node : Number(node) || 18446744073709551615;
    case 7:
      return Array.from({ length: below(random, 50) }, () => node);
    case 8:
      return typeof node === 'string' ? `${node}${pick(random, INTERESTING_TEXT)}` : node === null ? 'null' : JSON.stringify(node);
    default:
      return pick<Json>(random, ['1s', '-1s', '315576000001s', '0.0000000001s', 'x.y', 'type.googleapis.com/google.protobuf.Struct', '127.0.0.1', '::1', '/dev/null']);
  }
}

/** Arrays and objects nested `depth` deep. */
export function nested(random: Random, depth: number): Json {
  let node: Json = 1;
  for (let i = 0; i < depth; i++) node = random() < 0.5 ? [node] : { a: node };
  return node;
}
