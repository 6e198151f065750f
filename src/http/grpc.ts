// What the HTTP layer knows of gRPC (Envoy's Grpc::Common and Grpc::Utility): which requests are
// gRPC, and how a local reply to one is told in gRPC terms. Pure.

import { firstHeaderValue, type MessageHead } from './message';

const GRPC_CONTENT_TYPE = 'application/grpc';

/** gRPC status codes this layer names. */
export const enum GrpcStatus {
  Ok = 0,
  Canceled = 1,
  Unknown = 2,
  PermissionDenied = 7,
  ResourceExhausted = 8,
  Unimplemented = 12,
  Internal = 13,
  Unavailable = 14,
  Unauthenticated = 16,
}

/** A gRPC message: content-type application/grpc, alone or with `+codec` (Envoy's isGrpcRequestHeaders; application/grpc-web is not gRPC). */
export function isGrpc(head: MessageHead): boolean {
  const type = firstHeaderValue(head.headers, 'content-type');
  return type !== undefined && type.startsWith(GRPC_CONTENT_TYPE) && (type.length === GRPC_CONTENT_TYPE.length || type.charCodeAt(GRPC_CONTENT_TYPE.length) === 0x2b);
}

/** Envoy's Grpc::Utility::httpToGrpcStatus: the gRPC status of a local reply with this HTTP status. */
export function httpToGrpcStatus(status: number): GrpcStatus {
  switch (status) {
    case 400:
      return GrpcStatus.Internal;
    case 401:
      return GrpcStatus.Unauthenticated;
    case 403:
      return GrpcStatus.PermissionDenied;
    case 404:
      return GrpcStatus.Unimplemented;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcStatus.Unavailable;
    default:
      return GrpcStatus.Unknown;
  }
}

/** grpc-message's percent-encoding (gRPC over HTTP/2): bytes outside printable ASCII, and `%`, as %XX of their UTF-8. */
export function encodeGrpcMessage(message: string): string {
  let plain = true;
  for (let i = 0; i < message.length && plain; i++) {
    const code = message.charCodeAt(i);
    plain = code >= 0x20 && code <= 0x7e && code !== 0x25;
  }
  if (plain) return message;
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A received grpc-message, percent-decoded as UTF-8; a `%` not followed by two hex digits stays as it is. */
export function decodeGrpcMessage(message: string): string {
  if (!message.includes('%')) return message;
  const bytes: number[] = [];
  for (let i = 0; i < message.length; i++) {
    const hex = message[i] === '%' ? message.slice(i + 1, i + 3) : '';
    if (/^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(message[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A gRPC call's service and method, from its path. */
export interface GrpcCallName {
  readonly service: string;
  readonly method: string;
}

/** Envoy's Grpc::Common::resolveServiceAndMethod: `/<service>/<method>` (query left out, empty segments skipped), else null. */
export function grpcCallName(path: string): GrpcCallName | null {
  const query = path.indexOf('?');
  const parts = (query === -1 ? path : path.slice(0, query)).split('/').filter((part) => part !== '');
  return parts.length === 2 ? { service: parts[0], method: parts[1] } : null;
}
