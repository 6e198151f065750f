// Models and parsed options are shared by every reader that holds them: frozen, no reader can
// change what another sees.

/**
 * Freezes `value` and everything it reaches. Buffers (a DataSource's inline bytes) cannot be
 * frozen and are left as they are; a frozen object is taken as frozen all the way down.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value) || Object.isFrozen(value)) return value;
  Object.freeze(value);
  // Indexes and keys rather than Object.values: no array per object of a large model.
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  else for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
