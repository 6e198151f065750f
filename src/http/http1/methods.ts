// The request methods Envoy 1.16's HTTP/1 codec knows: http-parser 2.9's table, which is llhttp's
// HTTP table without QUERY. Methods are case-sensitive (RFC 9110 section 9.1): `get` is not GET.
// Any other method is refused by the codec (HPE_INVALID_METHOD) before an upstream sees it.

const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'DELETE', 'GET', 'HEAD', 'POST', 'PUT', 'CONNECT', 'OPTIONS', 'TRACE',
  // WebDAV
  'COPY', 'LOCK', 'MKCOL', 'MOVE', 'PROPFIND', 'PROPPATCH', 'SEARCH', 'UNLOCK', 'BIND', 'REBIND', 'UNBIND', 'ACL',
  // Subversion
  'REPORT', 'MKACTIVITY', 'CHECKOUT', 'MERGE',
  // UPnP
  'M-SEARCH', 'NOTIFY', 'SUBSCRIBE', 'UNSUBSCRIBE',
  // RFC 5789, then caches, CalDAV, RFC 2068 and Icecast
  'PATCH', 'PURGE', 'MKCALENDAR', 'LINK', 'UNLINK', 'SOURCE',
]);

export function isKnownMethod(method: string): boolean {
  // Most requests are GETs: known without hashing the string just parsed.
  return method === 'GET' || KNOWN_METHODS.has(method);
}
