import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseYaml } from '../../src/config/config_text';
import { FieldError } from '../../src/config/errors';
import { checkInputLimits, MAX_ALIAS_EXPANSION, MAX_FILE_BYTES, MAX_NESTING_DEPTH, MAX_STRING_LENGTH, NESTING_TOO_DEEP } from '../../src/config/input_limits';
import { loadBootstrap } from '../../src/config/load';
import { JsonValue } from '../../src/config/json';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const ALIASES_REASON = `YAML aliases expand to more than ${MAX_ALIAS_EXPANSION} values (limit)`;

/** `levels` objects nested under key `a`, the innermost holding `leaf` (or empty). */
function nested(levels: number, leaf?: JsonValue): JsonValue {
  let value: JsonValue = leaf === undefined ? {} : { a: leaf };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

const pathAt = (level: number) => Array.from({ length: level - 1 }, () => 'a').join('.');

test('the limits are the documented numbers', () => {
  assert.equal(MAX_NESTING_DEPTH, 100);
  assert.equal(MAX_ALIAS_EXPANSION, 1_000_000);
  assert.equal(NESTING_TOO_DEEP, 'nesting deeper than 100 levels (limit)');
  assert.equal(MAX_STRING_LENGTH, 4 * 1024 * 1024);
  assert.equal(MAX_FILE_BYTES, 64 * 1024 * 1024);
});

test('nesting: 100 levels of objects or lists pass, the 101st is refused at its path', () => {
  assert.doesNotThrow(() => checkInputLimits(nested(MAX_NESTING_DEPTH, 'x')));
  assert.throws(() => checkInputLimits(nested(MAX_NESTING_DEPTH + 1)), new FieldError(pathAt(MAX_NESTING_DEPTH + 1), NESTING_TOO_DEEP));
  // 99 lists under the root object.
  let list: JsonValue = [];
  for (let i = 1; i < MAX_NESTING_DEPTH - 1; i++) list = [list];
  assert.doesNotThrow(() => checkInputLimits({ l: list }));
  assert.throws(() => checkInputLimits({ l: [list] }), (e: unknown) => e instanceof FieldError && e.reason === NESTING_TOO_DEEP);
});

test('a tree without aliases (JSON, protobuf) has the same depth limit, at the same path', () => {
  assert.doesNotThrow(() => checkInputLimits(nested(MAX_NESTING_DEPTH, 'x'), false));
  assert.throws(() => checkInputLimits(nested(MAX_NESTING_DEPTH + 1), false), new FieldError(pathAt(MAX_NESTING_DEPTH + 1), NESTING_TOO_DEEP));
});

test('YAML refuses exactly what the tree check does, block or flow, with a scalar at the bottom or not', () => {
  const block = (levels: number) =>
    Array.from({ length: levels }, (_, i) => `${'  '.repeat(i)}a:`).join('\n') + ` x\n`;
  const flow = (levels: number, bottom: string) => '{a: '.repeat(levels - 1) + `{${bottom}}` + '}'.repeat(levels - 1);
  for (const [name, text] of [
    ['block', block],
    ['flow with a scalar', (n: number) => flow(n, 'a: x')],
    ['flow, empty at the bottom', (n: number) => flow(n, '')],
  ] as const) {
    assert.doesNotThrow(() => checkInputLimits(parseYaml(text(MAX_NESTING_DEPTH))), name);
    assert.throws(
      () => checkInputLimits(parseYaml(text(MAX_NESTING_DEPTH + 1))),
      (e: unknown) => e instanceof FieldError && e.reason.includes(NESTING_TOO_DEEP),
      name,
    );
  }
  // Deeper than js-yaml's own guard: its message, in the words of the limit.
  assert.throws(() => parseYaml('['.repeat(10_000)), new FieldError('', `YAML ${NESTING_TOO_DEEP} at line 1, column 102`));
});

test('an alias counts at the depth where it lands, and a cycle ends at the depth limit', () => {
  const anchored = nested(60, 'x');
  assert.doesNotThrow(() => checkInputLimits({ deep: anchored, again: anchored }));
  assert.throws(
    () => checkInputLimits({ deep: anchored, again: nested(41, anchored) }),
    new FieldError(`again.${pathAt(42)}`, NESTING_TOO_DEEP),
  );
  const cycle = parseYaml('a: &x [*x]');
  assert.throws(() => checkInputLimits(cycle), (e: unknown) => e instanceof FieldError && e.reason === NESTING_TOO_DEEP);
});

test('aliases may add up to the limit of values, and not one more', () => {
  // 999 scalars and their list: 1000 values each time the list is met again.
  const thousand = Array.from({ length: 999 }, () => 0);
  const aliases = Array.from({ length: MAX_ALIAS_EXPANSION / 1000 }, () => thousand);
  const empty: JsonValue = [];
  assert.doesNotThrow(() => checkInputLimits({ anchor: thousand, aliases, once: [empty] }));
  assert.throws(
    () => checkInputLimits({ anchor: thousand, aliases, twice: [empty, empty] }),
    new FieldError('twice[1]', ALIASES_REASON),
  );
});

test('a billion laughs is refused where the expansion passes the limit, without expanding it', () => {
  const levels = Array.from({ length: 9 }, (_, i) =>
    i === 0 ? `  lol0: &lol0 [${Array(10).fill('lol').join(', ')}]` : `  lol${i}: &lol${i} [${Array(10).fill(`*lol${i - 1}`).join(', ')}]`,
  );
  const laughs = parseYaml(`metadata:\n${levels.join('\n')}\n`);
  // lol0..lol4 add 123,440 values; each alias of lol4 in lol5 adds 111,111 more.
  assert.throws(() => checkInputLimits(laughs), new FieldError('metadata.lol5[7]', ALIASES_REASON));
});

test('plain trees of any size are not limited by the alias bound', () => {
  const wide = { list: Array.from({ length: MAX_ALIAS_EXPANSION + 1 }, (_, i) => i) };
  assert.doesNotThrow(() => checkInputLimits(wide));
});

test('strings: the longest allowed passes; one longer, value or key, is refused at its path', () => {
  const longest = 'x'.repeat(MAX_STRING_LENGTH);
  assert.doesNotThrow(() => checkInputLimits({ list: [{ name: longest }], [longest]: 1 }));
  const tooLong = `${longest}x`;
  const reason = (what: string) => `${what} of ${MAX_STRING_LENGTH + 1} characters, longer than ${MAX_STRING_LENGTH} (limit)`;
  for (const shared of [true, false]) {
    assert.throws(() => checkInputLimits({ list: [{ ok: 'x', name: tooLong }] }, shared), new FieldError('list[0].name', reason('a string')));
    // The path stops above a key that long.
    assert.throws(() => checkInputLimits({ map: { [tooLong]: 1 } }, shared), new FieldError('map', reason('a key')));
  }
});

test('--config-yaml over the size limit is refused before it is parsed', () => {
  const text = `# ${'x'.repeat(MAX_FILE_BYTES)}`;
  assert.throws(
    () => loadBootstrap({ extensions: builtinExtensions(), configYaml: text, allowUnknownStaticFields: false }),
    (e: unknown) => e instanceof Error && e.message === `--config-yaml: text of ${MAX_FILE_BYTES + 2} bytes, larger than ${MAX_FILE_BYTES} (limit)`,
  );
});
