// headers_with_underscores_action: Envoy's check for underscores in request header names, on a
// flat [name, value, ...] list as both codecs hold it. Pseudo-header names never contain one.

/** Whether any name in `headers` contains an underscore. */
export function hasUnderscoreHeader(headers: readonly string[]): boolean {
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i].includes('_')) return true;
  }
  return false;
}

/** Removes, in place, the headers whose names contain an underscore; returns how many went. */
export function dropUnderscoreHeaders(headers: string[]): number {
  let kept = 0;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i].includes('_')) continue;
    headers[kept] = headers[i];
    headers[kept + 1] = headers[i + 1];
    kept += 2;
  }
  const dropped = (headers.length - kept) / 2;
  headers.length = kept;
  return dropped;
}
