// A query parameter of a request path, as Envoy 1.16's route matchers and hash policies read it.

/**
 * Envoy 1.16's parseQueryString, first value wins: `&`-separated parameters after the first `?`,
 * not percent-decoded; a parameter without `=` has the value ''. Null when the name is absent.
 */
export function queryParameter(path: string, name: string): string | null {
  let start = path.indexOf('?');
  if (start < 0) return null;
  start++;
  while (start < path.length) {
    let end = path.indexOf('&', start);
    if (end < 0) end = path.length;
    const equals = path.indexOf('=', start);
    if (equals >= 0 && equals < end) {
      if (path.slice(start, equals) === name) return path.slice(equals + 1, end);
    } else if (path.slice(start, end) === name) {
      return '';
    }
    start = end + 1;
  }
  return null;
}
