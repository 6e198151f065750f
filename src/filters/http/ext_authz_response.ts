// What ext_authz makes of its service's answer (Envoy 1.16's ExtAuthz::Response): allowed, with
// the headers to set, add or append on the upstream request (and dynamic metadata, from gRPC);
// denied, with the status, headers and body of the reply; or an error. From the HTTP service:
// 200 allows with the headers allowed_upstream_headers(_to_append) pass, a 5xx is an error, any
// other status denies with the headers the client matcher passes. From the gRPC service: an OK
// status allows with ok_response's headers, anything else denies with denied_response (403 when
// it has none); a header option's `append` appends (to a header the request has) when true and
// sets otherwise, an unset one included, as Envoy 1.16 reads it. Pure.

import { utf8Bytes } from '../../common/byte_string';
import type { ResponseHead } from '../../http/message';
import type { HeaderNameMatcher } from './ext_authz_header_matchers';

export type AuthzResponse =
  | {
      readonly kind: 'ok';
      /** [name, value, ...]: each replaces the request's header of its name. */
      readonly headersToSet: readonly string[];
      /** Added beside the request's own. */
      readonly headersToAdd: readonly string[];
      /** Appended, `,`-separated, to a header the request has; dropped otherwise. */
      readonly headersToAppend: readonly string[];
      /** For the stream's dynamic metadata; null when none. */
      readonly dynamicMetadata: Readonly<Record<string, unknown>> | null;
    }
  | {
      readonly kind: 'denied';
      readonly status: number;
      /** [name, value, ...]: each replaces the reply's header of its name. */
      readonly headers: readonly string[];
      /** The HTTP service's body as it came; a gRPC service's text (sent as UTF-8). */
      readonly body: string | Buffer;
    }
  | { readonly kind: 'error' };

export const AUTHZ_ERROR: AuthzResponse = { kind: 'error' };

const FORBIDDEN = 403;

export interface HttpResponseMatchers {
  readonly upstream: HeaderNameMatcher;
  readonly upstreamToAppend: HeaderNameMatcher;
  readonly client: HeaderNameMatcher;
}

/** The HTTP service's answer (the async client's local reply to a failed request included). */
export function httpAuthzResponse(head: ResponseHead, body: Buffer, matchers: HttpResponseMatchers): AuthzResponse {
  const status = head.status;
  if (status >= 500 && status < 600) return AUTHZ_ERROR;
  if (status === 200) {
    return {
      kind: 'ok',
      headersToSet: matching(head.headers, matchers.upstream),
      headersToAdd: matching(head.headers, matchers.upstreamToAppend),
      headersToAppend: [],
      dynamicMetadata: null,
    };
  }
  return { kind: 'denied', status, headers: matching(head.headers, matchers.client), body };
}

function matching(headers: readonly string[], matcher: HeaderNameMatcher): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) if (matcher(headers[i]!)) out.push(headers[i]!, headers[i + 1]!);
  return out;
}

/** A CheckResponse as ProtoJSON (protobufjs's toJson: lowerCamelCase names). */
export interface CheckResponseJson {
  readonly status?: { readonly code?: number };
  readonly deniedResponse?: { readonly status?: { readonly code?: string | number }; readonly headers?: readonly HeaderValueOptionJson[]; readonly body?: string };
  readonly okResponse?: { readonly headers?: readonly HeaderValueOptionJson[]; readonly dynamicMetadata?: Record<string, unknown> };
  readonly dynamicMetadata?: Record<string, unknown>;
}

interface HeaderValueOptionJson {
  readonly header?: { readonly key?: string; readonly value?: string };
  readonly append?: boolean;
}

/** @param statusCodes type.v3.StatusCode's numbers by name */
export function grpcAuthzResponse(response: CheckResponseJson, statusCodes: Readonly<Record<string, number>>): AuthzResponse {
  if ((response.status?.code ?? 0) === 0) {
    const ok = response.okResponse;
    const { set, append } = headerOptions(ok?.headers ?? []);
    // ok_response's own (deprecated) dynamic_metadata wins over the response's.
    const metadata = nonEmpty(ok?.dynamicMetadata) ?? nonEmpty(response.dynamicMetadata);
    return { kind: 'ok', headersToSet: set, headersToAdd: [], headersToAppend: append, dynamicMetadata: metadata };
  }
  const denied = response.deniedResponse;
  if (denied === undefined) return { kind: 'denied', status: FORBIDDEN, headers: [], body: '' };
  const code = denied.status?.code;
  const status = typeof code === 'number' ? code : code === undefined ? 0 : (statusCodes[code] ?? 0);
  // A denied_response's headers to append are none of the reply's, as in Envoy 1.16.
  return { kind: 'denied', status: status === 0 ? FORBIDDEN : status, headers: headerOptions(denied.headers ?? []).set, body: denied.body ?? '' };
}

function headerOptions(options: readonly HeaderValueOptionJson[]): { set: string[]; append: string[] } {
  const set: string[] = [];
  const append: string[] = [];
  for (const option of options) {
    const name = (option.header?.key ?? '').toLowerCase();
    if (name === '') continue;
    // A proto string is Unicode; a header value goes out as its UTF-8 bytes, as Envoy sends it.
    (option.append === true ? append : set).push(name, utf8Bytes(option.header?.value ?? ''));
  }
  return { set, append };
}

function nonEmpty(struct: Record<string, unknown> | undefined): Record<string, unknown> | null {
  return struct !== undefined && Object.keys(struct).length > 0 ? struct : null;
}
