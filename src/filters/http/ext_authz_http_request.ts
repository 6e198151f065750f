// The request ext_authz's HTTP service is sent (Envoy 1.16's RawHttpClientImpl::check): the
// original method, the path behind path_prefix, the host, the check's headers the request
// matcher passes (content-length aside), headers_to_add in place of any of their names, and the
// body the check holds, with its length. Pure.

import { RequestHead, setHeader } from '../../http/message';
import type { Check } from './ext_authz_check_request';
import type { HeaderNameMatcher } from './ext_authz_header_matchers';

export interface HttpRequestSettings {
  readonly pathPrefix: string;
  readonly requestHeaders: HeaderNameMatcher;
  /** [name, value, ...]. */
  readonly headersToAdd: readonly string[];
}

const EMPTY = Buffer.alloc(0);

export function httpCheckRequest(check: Check, settings: HttpRequestSettings): { head: RequestHead; body: Buffer } {
  const http = check.request.attributes.request.http;
  const head = new RequestHead(http.method, settings.pathPrefix + http.path, false);
  head.authority = http.host;
  for (const [name, value] of Object.entries(http.headers)) {
    // The pseudo-headers are the head's fields; the length is the body's.
    if (name.startsWith(':') || name === 'content-length' || !settings.requestHeaders(name)) continue;
    head.headers.push(name, value);
  }
  const added = settings.headersToAdd;
  for (let i = 0; i < added.length; i += 2) setHeader(head.headers, added[i]!, added[i + 1]!);
  const body = check.body ?? EMPTY;
  head.contentLength = head.bodyLength = body.length;
  return { head, body };
}
