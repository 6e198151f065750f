// The trace status a request carries in its x-request-id (Envoy's UUID request id extension): a
// version 4 UUID's version digit, at position 14, is replaced by a mark that every proxy the
// request passes through reads, so that a trace decided once is followed all along. Pure.

export const enum TraceStatus {
  NoTrace,
  /** Chosen by random_sampling. */
  Sampled,
  /** The client asked, with x-client-trace-id (client_sampling). */
  Client,
  /** A trusted client forced it, with x-proxy-force-trace. */
  Forced,
}

const UUID_LENGTH = 36;
const STATUS_POSITION = 14;
const MARKS: Readonly<Record<TraceStatus, string>> = {
  [TraceStatus.NoTrace]: '4',
  [TraceStatus.Sampled]: 'a',
  [TraceStatus.Client]: 'b',
  [TraceStatus.Forced]: '9',
};

/** The status a request id says; NoTrace for one that is no UUID. */
export function traceStatusOf(requestId: string): TraceStatus {
  if (requestId.length !== UUID_LENGTH) return TraceStatus.NoTrace;
  switch (requestId[STATUS_POSITION]) {
    case 'a':
      return TraceStatus.Sampled;
    case 'b':
      return TraceStatus.Client;
    case '9':
      return TraceStatus.Forced;
    default:
      return TraceStatus.NoTrace;
  }
}

/** The request id marked with `status`; one that is no UUID is left as it is. */
export function withTraceStatus(requestId: string, status: TraceStatus): string {
  if (requestId.length !== UUID_LENGTH) return requestId;
  return requestId.slice(0, STATUS_POSITION) + MARKS[status] + requestId.slice(STATUS_POSITION + 1);
}

/**
 * Envoy's modBy: the request id's first 8 characters as a hexadecimal number, modulo `mod`,
 * which every proxy computes alike for the same request; null when they are not hexadecimal.
 */
export function requestIdModulo(requestId: string, mod: number): number | null {
  if (requestId.length < 8) return null;
  const head = requestId.slice(0, 8);
  if (!/^[0-9a-fA-F]{8}$/.test(head)) return null;
  return Number.parseInt(head, 16) % mod;
}
