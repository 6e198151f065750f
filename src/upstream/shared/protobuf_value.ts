// google.protobuf.Value in its JSON form (null, number, string, boolean, Struct as an object,
// ListValue as an array), compared as Envoy's ValueUtil::equal compares them and keyed as its
// HashedValue keys them: what endpoint metadata and route metadata_match values are.

/** Deep equality of two Values: same kind, numbers by value (NaN equals nothing), Struct fields by name. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === null || typeof a !== 'object') return a === b;
  if (b === null || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const list = b as unknown[];
    return a.length === list.length && a.every((v, i) => valuesEqual(v, list[i]));
  }
  const fields = Object.keys(a);
  const other = b as Record<string, unknown>;
  return (
    fields.length === Object.keys(other).length &&
    fields.every((name) => Object.hasOwn(other, name) && valuesEqual((a as Record<string, unknown>)[name], other[name]))
  );
}

/**
 * A string that two Values share exactly when valuesEqual holds between them (NaN aside, which
 * protobuf JSON cannot carry): JSON with Struct fields sorted, so field order does not matter.
 */
export function valueKey(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(valueKey).join(',')}]`;
  const struct = value as Record<string, unknown>;
  const names = Object.keys(struct).sort();
  return `{${names.map((name) => `${JSON.stringify(name)}:${valueKey(struct[name])}`).join(',')}}`;
}
