// UPSTREAM_METADATA(["namespace", "key", ...]) in custom header values (Envoy 1.16's
// parseUpstreamMetadataField): the value at that path of the upstream host's filter metadata, as
// text; '' when the path leads nowhere or to a value that is not a number, string or bool. Pure.

import { FieldError } from '../../config/errors';

/** @throws FieldError (path '') with Envoy's message when `params` is not `(["ns", "key", ...])` */
export function parseMetadataPath(params: string): readonly string[] {
  const trimmed = params.trim();
  const refuse = (because = ''): never => {
    throw new FieldError('', `Invalid header configuration. Expected format UPSTREAM_METADATA(["namespace", "k", ...]), actual format UPSTREAM_METADATA${trimmed}${because}`);
  };
  if (!trimmed.startsWith('(') || !trimmed.endsWith(')')) refuse();
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed.slice(1, -1));
  } catch (error) {
    refuse(`, because ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed) || !parsed.every((item): item is string => typeof item === 'string')) return refuse(', because the parameters are not a list of strings');
  // A namespace and at least one key.
  if (parsed.length < 2) refuse();
  return parsed;
}

/** The text of the value at `path` of `metadata` (filter_metadata by namespace). */
export function metadataText(metadata: Readonly<Record<string, unknown>>, path: readonly string[]): string {
  let value: unknown = metadata;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, key)) return '';
    value = (value as Record<string, unknown>)[key];
  }
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return shortestG(value);
    default:
      return '';
  }
}

/** C's `%g` (fmt's `{:g}`): six significant digits, trailing zeros dropped, an exponent of two digits or more. */
export function shortestG(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const exponent = Math.floor(Math.log10(Math.abs(Number(value.toPrecision(6)))));
  if (exponent < -4 || exponent >= 6) {
    const [mantissa, power] = value.toExponential(5).split('e') as [string, string];
    const digits = Math.abs(Number(power));
    return `${stripZeros(mantissa)}e${power.startsWith('-') ? '-' : '+'}${digits < 10 ? '0' : ''}${digits}`;
  }
  return stripZeros(value.toFixed(Math.max(0, 5 - exponent)));
}

function stripZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
