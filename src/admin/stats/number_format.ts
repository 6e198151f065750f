// How /stats prints a double, as Envoy does through fmt: `{}` in the text form (shortest
// round-trip digits, `.0` on integral values, `nan` for an interval without samples) and
// `{:.32g}` for Prometheus bucket bounds and sums. Pure.

/** Significant digits and the decimal exponent of the first one: 1.025 is ('1025', 0). */
interface Decimal {
  readonly digits: string;
  readonly exponent: number;
}

/** `toExponential` gives exact digits (shortest round-trip without an argument). */
function decimal(magnitude: number, fractionDigits?: number): Decimal {
  const text = magnitude.toExponential(fractionDigits);
  const e = text.indexOf('e');
  return { digits: text.slice(0, e).replace('.', ''), exponent: Number(text.slice(e + 1)) };
}

function special(value: number): string | null {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  return null;
}

function sign(value: number): string {
  return value < 0 || Object.is(value, -0) ? '-' : '';
}

/** `d.ddde+XX`: at least two exponent digits, as C and fmt print them. */
function exponential({ digits, exponent }: Decimal): string {
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const magnitude = String(Math.abs(exponent)).padStart(2, '0');
  return `${mantissa}e${exponent < 0 ? '-' : '+'}${magnitude}`;
}

/** Plain notation; `integralSuffix` is what an integral value ends with (`.0` for fmt's `{}`). */
function fixed({ digits, exponent }: Decimal, integralSuffix: string): string {
  if (exponent < 0) return `0.${'0'.repeat(-exponent - 1)}${digits}`;
  if (digits.length <= exponent + 1) return digits + '0'.repeat(exponent + 1 - digits.length) + integralSuffix;
  return `${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
}

/** fmt's `{}` for a double: 1 -> `1.0`, 1.025 -> `1.025`, 1e16 -> `1e+16`, NaN -> `nan`. */
export function formatShortest(value: number): string {
  const named = special(value);
  if (named !== null) return named;
  const d = decimal(Math.abs(value));
  // fmt switches to exponent notation outside [1e-4, 1e16).
  const body = d.exponent < -4 || d.exponent >= 16 ? exponential(d) : fixed(d, '.0');
  return sign(value) + body;
}

const G_PRECISION = 32;

/** printf's `%.32g`: 0.5 -> `0.5`, 1 -> `1`, 0.1 -> `0.10000000000000000555111512312578`. */
export function formatG32(value: number): string {
  const named = special(value);
  if (named !== null) return named;
  const exact = decimal(Math.abs(value), G_PRECISION - 1);
  // %g drops trailing zeros (and a point left without digits).
  const d = { digits: exact.digits.replace(/(?<=.)0+$/, ''), exponent: exact.exponent };
  const body = d.exponent < -4 || d.exponent >= G_PRECISION ? exponential(d) : fixed(d, '');
  return sign(value) + body;
}
