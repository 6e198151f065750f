// What the connection manager may do to a request's path before any filter or route sees it
// (Envoy 1.16's normalize_path and merge_slashes). Only the path before the query is touched;
// the query follows unchanged. Pure.

/**
 * RFC 3986 section 5.2.4's dot segments removed (`%2e` counts as a dot, as in the URL
 * canonicalizer Envoy uses) and backslashes read as slashes. A path that is not absolute
 * (`OPTIONS *`; the codecs let no other through) is left as it is.
 */
export function normalizePath(path: string): string {
  const queryAt = path.indexOf('?');
  const rest = queryAt < 0 ? '' : path.slice(queryAt);
  const raw = (queryAt < 0 ? path : path.slice(0, queryAt)).replaceAll('\\', '/');
  if (!raw.startsWith('/')) return path;
  const segments = raw.slice(1).split('/');
  const out: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    const dots = dotCount(segment);
    if (dots === 1) {
      // `/a/.` ends in a directory: `/a/`.
      if (last) out.push('');
      continue;
    }
    if (dots === 2) {
      out.pop();
      if (last) out.push('');
      continue;
    }
    out.push(segment);
  }
  return `/${out.join('/')}${rest}`;
}

/** `.` and `%2e` (either case) are dots: 1 or 2 for a dot segment, 0 otherwise. */
function dotCount(segment: string): number {
  const plain = segment.replace(/%2e/gi, '.');
  return plain === '.' ? 1 : plain === '..' ? 2 : 0;
}

/** Runs of slashes in the path before the query made one (Envoy's PathUtil::mergeSlashes). */
export function mergeSlashes(path: string): string {
  const queryAt = path.indexOf('?');
  const pathPart = queryAt < 0 ? path : path.slice(0, queryAt);
  if (!pathPart.includes('//')) return path;
  return pathPart.replace(/\/{2,}/g, '/') + (queryAt < 0 ? '' : path.slice(queryAt));
}
