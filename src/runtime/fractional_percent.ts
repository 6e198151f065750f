// envoy.type.v3.FractionalPercent: a numerator over a fixed denominator, and Envoy's rule for
// deciding a request against it with a random number.

import type { FractionalPercent, PercentDenominator } from '../config/model';
import { parseYaml } from '../config/config_text';
import { isJsonObject } from '../config/json';

export const DENOMINATORS: Readonly<Record<PercentDenominator, number>> = {
  HUNDRED: 100,
  TEN_THOUSAND: 10_000,
  MILLION: 1_000_000,
};

const DENOMINATOR_NAMES = Object.keys(DENOMINATORS) as PercentDenominator[];
const MAX_UINT32 = 0xffff_ffff;

/** Envoy's evaluateFractionalPercent: a numerator above the denominator is always in. */
export function evaluateFractionalPercent(percent: FractionalPercent, random: number): boolean {
  return random % DENOMINATORS[percent.denominator] < percent.numerator;
}

/**
 * A runtime value written as a FractionalPercent in YAML or JSON (`numerator: 5` with an
 * optional `denominator`), or undefined: anything else is simply not a percent.
 */
export function parseFractionalPercent(raw: string): FractionalPercent | undefined {
  let value: unknown;
  try {
    value = parseYaml(raw);
  } catch {
    return undefined;
  }
  if (!isJsonObject(value) || Object.keys(value).some((k) => k !== 'numerator' && k !== 'denominator')) return undefined;
  const numerator = value['numerator'] ?? 0;
  if (typeof numerator !== 'number' || !Number.isInteger(numerator) || numerator < 0 || numerator > MAX_UINT32) return undefined;
  const denominator = denominatorOf(value['denominator'] ?? 'HUNDRED');
  return denominator === undefined ? undefined : { numerator, denominator };
}

/** An enum by name, or by number as proto3 JSON also allows. */
function denominatorOf(value: unknown): PercentDenominator | undefined {
  if (typeof value === 'number') return DENOMINATOR_NAMES[value];
  return DENOMINATOR_NAMES.find((name) => name === value);
}
