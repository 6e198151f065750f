// The admin layer's one rule: /runtime_modify's values are merged in, and an empty value
// removes the key from this layer only (a value of another layer cannot be deleted).

/** The admin layer after `updates`; the input is left untouched. */
export function mergeAdminValues(current: ReadonlyMap<string, string>, updates: Iterable<readonly [string, string]>): Map<string, string> {
  const next = new Map(current);
  for (const [key, value] of updates) {
    if (value === '') next.delete(key);
    else next.set(key, value);
  }
  return next;
}
