// One runtime value as Envoy's snapshot keeps it: the raw string, and the readings of it as a
// boolean, a number and a FractionalPercent, each present only when the string parses so.

import type { FractionalPercent } from '../config/model';
import { parseFractionalPercent } from './fractional_percent';

export interface RuntimeEntry {
  readonly raw: string;
  readonly bool?: boolean;
  readonly double?: number;
  /** floor(double) when 0 <= double <= 2^64. */
  readonly uint?: number;
  readonly fractionalPercent?: FractionalPercent;
}

const UNSIGNED = /^\+?\d+$/;
// absl::SimpleAtod: a decimal or exponent form, or inf/nan, surrounded by optional whitespace.
const DOUBLE = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)$/i;
const MAX_UINT64 = 2 ** 64;

/** Envoy's resolveEntryType, in its order: boolean, then number, then percent. */
export function parseEntry(raw: string): RuntimeEntry {
  const stripped = raw.trim();
  let bool: boolean | undefined;
  // An integer also reads as a boolean (non-zero is true) and goes on to be read as a number.
  if (UNSIGNED.test(stripped)) bool = BigInt(stripped) !== 0n;
  else if (stripped.toLowerCase() === 'true') return { raw, bool: true };
  else if (stripped.toLowerCase() === 'false') return { raw, bool: false };
  const withBool = bool === undefined ? { raw } : { raw, bool };
  if (DOUBLE.test(stripped)) {
    const double = parseDouble(stripped);
    if (double >= 0 && double <= MAX_UINT64) return { ...withBool, double, uint: Math.floor(double) };
    const fractionalPercent = parseFractionalPercent(raw);
    return fractionalPercent === undefined ? { ...withBool, double } : { ...withBool, double, fractionalPercent };
  }
  const fractionalPercent = parseFractionalPercent(raw);
  return fractionalPercent === undefined ? withBool : { ...withBool, fractionalPercent };
}

function parseDouble(text: string): number {
  const lower = text.toLowerCase().replace(/^\+/, '');
  if (lower.endsWith('nan')) return NaN;
  if (lower.includes('inf')) return lower.startsWith('-') ? -Infinity : Infinity;
  return Number(lower);
}
