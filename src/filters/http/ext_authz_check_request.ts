// The CheckRequest ext_authz sends (Envoy 1.16's CheckRequestUtils::createHttpCheck), as ProtoJSON
// for envoy.service.auth.v3.CheckRequest: the peers (addresses; principals from the TLS
// certificates; the source's certificate when asked for, and its service cluster), the request's
// time, and its HTTP attributes: the stream's id, method, path, host, scheme (HTTP/2's :scheme;
// Envoy 1.16's HTTP/1 requests have none), protocol, size, the headers with their pseudo-headers,
// and the body held so far, cut to max_request_bytes (x-proxy-auth-partial-body says whether it
// was); then the route's context extensions and the metadata context. query and fragment stay
// empty, as Envoy 1.16 leaves them (the path carries the query). Pure.

import { firstHeaderValue, type RequestHead } from '../../http/message';
import { parseIpAndPort } from '../../network/socket_address';
import type { DownstreamConnectionInfo } from '../../stream_info/stream_info';
import type { DownstreamFacts } from './http_filter';

/** What Envoy's x-envoy-auth-partial-body is here: whether the body in the check was cut. */
export const PARTIAL_BODY_HEADER = 'x-proxy-auth-partial-body';
const SERVICE_CLUSTER_HEADER = 'x-proxy-downstream-service-cluster';

export interface CheckInputs {
  readonly head: RequestHead;
  readonly downstream: DownstreamFacts;
  /** The request body held for the check; null when the check carries none. */
  readonly body: Buffer | null;
  /** with_request_body's max_request_bytes; 0 without it. */
  readonly maxRequestBytes: number;
  /** Request body bytes received so far. */
  readonly size: number;
  readonly contextExtensions: Readonly<Record<string, string>>;
  /** filter_metadata by namespace. */
  readonly metadataContext: Readonly<Record<string, unknown>>;
  readonly includePeerCertificate: boolean;
}

/** A check: the CheckRequest as ProtoJSON, and its body's bytes (the HTTP service sends them as they are). */
export interface Check {
  readonly request: CheckRequestJson;
  readonly body: Buffer | null;
}

export interface CheckRequestJson {
  readonly attributes: {
    readonly source: PeerJson;
    readonly destination: PeerJson;
    readonly request: { readonly time: string; readonly http: HttpRequestJson };
    readonly context_extensions: Readonly<Record<string, string>>;
    readonly metadata_context: { readonly filter_metadata: Readonly<Record<string, unknown>> };
  };
}

interface PeerJson {
  readonly address?: { readonly socket_address: { readonly address: string; readonly port_value: number } };
  readonly service?: string;
  readonly principal?: string;
  readonly certificate?: string;
}

export interface HttpRequestJson {
  readonly id: string;
  readonly method: string;
  /** By name (pseudo-headers included); a repeated header's values joined with `,`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly path: string;
  readonly host: string;
  readonly scheme: string;
  readonly size: number;
  readonly protocol: string;
  readonly body?: string;
}

export function checkRequest(inputs: CheckInputs): Check {
  const { head, downstream } = inputs;
  const connection = downstream.connectionInfo();
  const service = firstHeaderValue(head.headers, SERVICE_CLUSTER_HEADER) ?? '';
  const cut = inputs.body !== null && inputs.maxRequestBytes > 0 ? inputs.body.subarray(0, inputs.maxRequestBytes) : null;
  const headers = headerMap(head, downstream.protocol === 'http2');
  if (cut !== null) headers[PARTIAL_BODY_HEADER] = cut.length !== inputs.body!.length ? 'true' : 'false';
  const http: HttpRequestJson = {
    id: String(downstream.streamId),
    method: head.method,
    headers,
    path: head.path,
    host: head.authority,
    scheme: downstream.protocol === 'http2' ? head.scheme : '',
    size: inputs.size,
    protocol: downstream.protocol === 'http2' ? 'HTTP/2' : head.http10 ? 'HTTP/1.0' : 'HTTP/1.1',
    ...(cut !== null ? { body: cut.toString('utf8') } : {}),
  };
  return {
    request: {
      attributes: {
        source: peer(connection, false, service, inputs.includePeerCertificate),
        destination: peer(connection, true, '', false),
        request: { time: new Date(downstream.startTime()).toISOString(), http },
        context_extensions: inputs.contextExtensions,
        metadata_context: { filter_metadata: inputs.metadataContext },
      },
    },
    body: cut,
  };
}

/** The request's headers as Envoy's header map holds them: the pseudo-headers first, a client's own partial-body header left out. */
function headerMap(head: RequestHead, http2: boolean): Record<string, string> {
  const map: Record<string, string> = { ':authority': head.authority, ':path': head.path, ':method': head.method };
  if (http2) map[':scheme'] = head.scheme;
  const headers = head.headers;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name === PARTIAL_BODY_HEADER) continue;
    map[name] = Object.hasOwn(map, name) ? `${map[name]},${headers[i + 1]}` : headers[i + 1]!;
  }
  return map;
}

/** Envoy's setAttrContextPeer: the principal is the certificate's first URI SAN, else its first DNS SAN, else its subject. */
function peer(connection: DownstreamConnectionInfo, local: boolean, service: string, includeCertificate: boolean): PeerJson {
  const address = parseIpAndPort(local ? connection.localAddress : connection.directRemoteAddress);
  const ssl = connection.ssl;
  let principal = '';
  if (ssl !== null) {
    const uris = local ? ssl.localUriSans : ssl.peerUriSans;
    const dns = local ? ssl.localDnsSans : ssl.peerDnsSans;
    principal = uris[0] ?? dns[0] ?? (local ? ssl.localSubject : ssl.peerSubject) ?? '';
  }
  const certificate = ssl !== null && !local && includeCertificate ? (ssl.peerCertificatePem ?? '') : '';
  return {
    ...(address !== null ? { address: { socket_address: { address: address.address, port_value: address.port } } } : {}),
    ...(service !== '' ? { service } : {}),
    ...(principal !== '' ? { principal } : {}),
    ...(certificate !== '' ? { certificate } : {}),
  };
}
