// A stream's gRPC status as Envoy 1.16's grpc_status access log filter reads it: the trailers'
// grpc-status, else the response headers' (a trailers-only response), else one inferred from
// the HTTP status; UNKNOWN when there is none of them.

import type { FormatContext } from './format_context';

/** Envoy's InvalidCode: a grpc-status that is not a known code. */
export const GRPC_STATUS_INVALID = -1;
const GRPC_STATUS_UNKNOWN = 2;
const MAXIMUM_KNOWN = 16;

/** grpc.Status names as config.accesslog.v3.GrpcStatusFilter spells them, in code order. */
export const GRPC_STATUS_NAMES = [
  'OK',
  'CANCELED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

export function grpcStatusOf(context: FormatContext): number {
  return (
    headerStatus(context.trailers) ??
    headerStatus(context.response?.headers ?? null) ??
    (context.info.responseCode !== 0 ? httpToGrpcStatus(context.info.responseCode) : GRPC_STATUS_UNKNOWN)
  );
}

function headerStatus(headers: readonly string[] | null): number | null {
  if (headers === null) return null;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] !== 'grpc-status') continue;
    const value = headers[i + 1]!;
    if (value === '') return null;
    if (!/^\d+$/.test(value)) return GRPC_STATUS_INVALID;
    const code = Number(value);
    return code > MAXIMUM_KNOWN ? GRPC_STATUS_INVALID : code;
  }
  return null;
}

/** Envoy's Grpc::Utility::httpToGrpcStatus. */
function httpToGrpcStatus(status: number): number {
  switch (status) {
    case 400:
      return 13; // INTERNAL
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 404:
      return 12; // UNIMPLEMENTED
    case 429:
    case 502:
    case 503:
    case 504:
      return 14; // UNAVAILABLE
    default:
      return GRPC_STATUS_UNKNOWN;
  }
}
