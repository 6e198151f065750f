// Spans as the Zipkin v2 API takes them (collector_endpoint_version HTTP_JSON): a JSON array of
// span objects, times in integer microseconds, ids in hexadecimal, tags as strings. Envoy 1.16's
// serializer is followed: a server span is marked `shared` when the tracer shares span
// contexts. Pure.

import { isIPv6 } from 'node:net';
import type { ZipkinSpan } from './zipkin_span';

/** The proxy as the spans' localEndpoint names it. */
export interface ZipkinEndpoint {
  /** The node's cluster (--service-cluster); '' omits it. */
  readonly serviceName: string;
  /** The server's local address; undefined omits it (Envoy's port is always 0). */
  readonly address: string | undefined;
}

export function zipkinJsonV2(spans: readonly ZipkinSpan[], endpoint: ZipkinEndpoint, sharedSpanContext: boolean): string {
  const localEndpoint: Record<string, string | number> = {};
  if (endpoint.serviceName !== '') localEndpoint['serviceName'] = endpoint.serviceName;
  if (endpoint.address !== undefined) {
    localEndpoint[isIPv6(endpoint.address) ? 'ipv6' : 'ipv4'] = endpoint.address;
    localEndpoint['port'] = 0;
  }
  return JSON.stringify(spans.map((span) => spanJson(span, localEndpoint, sharedSpanContext)));
}

function spanJson(span: ZipkinSpan, localEndpoint: Record<string, string | number>, sharedSpanContext: boolean): Record<string, unknown> {
  const { context } = span;
  const json: Record<string, unknown> = { traceId: (context.traceIdHigh ?? '') + context.traceId };
  if (context.parentId !== null) json['parentId'] = context.parentId;
  json['id'] = context.spanId;
  json['name'] = span.name;
  json['kind'] = span.kind;
  json['timestamp'] = Math.round(span.timestamp);
  json['duration'] = Math.round(span.duration);
  json['localEndpoint'] = localEndpoint;
  if (span.tags.size > 0) json['tags'] = Object.fromEntries(span.tags);
  if (span.annotations !== null) json['annotations'] = span.annotations.map((a) => ({ timestamp: Math.round(a.timestamp), value: a.value }));
  if (span.kind === 'SERVER' && sharedSpanContext) json['shared'] = true;
  return json;
}
