// Envoy's admin query parsing: split on '&', `k=v` or bare `k` (value ""), first duplicate
// wins. Percent-decoding is per handler, as in Envoy (some handlers take raw values).

export type QueryParams = ReadonlyMap<string, string>;

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

export function parseQuery(query: string, percentDecode: boolean): QueryParams {
  const out = new Map<string, string>();
  if (query === '') return out;
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    const key = percentDecode ? decode(rawKey) : rawKey;
    if (!out.has(key)) out.set(key, percentDecode ? decode(rawValue) : rawValue);
  }
  return out;
}

/** Splits a request target into path and query string. */
export function splitTarget(target: string): { path: string; query: string } {
  const q = target.indexOf('?');
  return q < 0 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q + 1) };
}
