// A runtime snapshot: the final key -> value map of the layers, with Envoy's typed accessors.
// Immutable; a change of any layer makes a new one.

import type { FractionalPercent } from '../config/model';
import { evaluateFractionalPercent } from './fractional_percent';
import { parseEntry, RuntimeEntry } from './runtime_entry';

/** Final values as they travel to workers: key, value pairs. */
export type RuntimeValues = readonly (readonly [string, string])[];

export class Runtime {
  private readonly entries = new Map<string, RuntimeEntry>();

  constructor(values: RuntimeValues) {
    for (const [key, value] of values) this.entries.set(key, parseEntry(value));
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): string | undefined {
    return this.entry(key)?.raw;
  }

  has(key: string): boolean {
    return this.entry(key) !== undefined;
  }

  /** Whether any key begins with `prefix`: a walk over every key, for a reader that keeps the answer per snapshot. */
  hasKeyWithPrefix(prefix: string): boolean {
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) return true;
    return false;
  }

  /** The value as an unsigned integer (a fraction is floored), else the default. */
  getInteger(key: string, defaultValue: number): number {
    return this.entry(key)?.uint ?? defaultValue;
  }

  /** The value as a number (Envoy's getDouble: any decimal or exponent form, inf, nan), else the default. */
  getDouble(key: string, defaultValue: number): number {
    return this.entry(key)?.double ?? defaultValue;
  }

  /** `true`/`false` in any case, or an integer (non-zero is true); else the default. */
  getBoolean(key: string, defaultValue: boolean): boolean {
    return this.entry(key)?.bool ?? defaultValue;
  }

  /**
   * Envoy's featureEnabled with a FractionalPercent default: the value as a FractionalPercent,
   * or an integer as a percentage (above 100: always), else the default; decided by `random`.
   */
  featureEnabled(key: string, defaultValue: FractionalPercent, random: number): boolean {
    const entry = key === '' ? undefined : this.entry(key);
    if (entry?.fractionalPercent !== undefined) return evaluateFractionalPercent(entry.fractionalPercent, random);
    if (entry?.uint !== undefined) {
      if (entry.uint > 100) return true;
      return evaluateFractionalPercent({ numerator: entry.uint, denominator: 'HUNDRED' }, random);
    }
    return evaluateFractionalPercent(defaultValue, random);
  }

  /**
   * An empty runtime (most configurations) answers without hashing the key: the supervisor
   * reads 100,000 circuit breaker keys of 10,000 clusters at its first stats flush.
   */
  private entry(key: string): RuntimeEntry | undefined {
    return this.entries.size === 0 ? undefined : this.entries.get(key);
  }
}
