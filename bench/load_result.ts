// What one load generator run reports, whichever generator ran it (wrk or h2load).

export interface LatencyPercentiles {
  readonly p50Us: number;
  readonly p75Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
}

export interface SocketErrors {
  readonly connect: number;
  readonly read: number;
  readonly write: number;
  readonly timeout: number;
}

export interface LoadResult {
  readonly requests: number;
  readonly durationUs: number;
  readonly requestsPerSecond: number;
  /** Null when the generator reports no percentiles (h2load prints only min, max, mean and sd). */
  readonly latency: LatencyPercentiles | null;
  /** Every response with a status of 400 or more. */
  readonly errorResponses: number;
  readonly socketErrors: SocketErrors;
}

export const NO_SOCKET_ERRORS: SocketErrors = { connect: 0, read: 0, write: 0, timeout: 0 };
