// Envoy's StreamInfo::ResponseFlag: why a stream ended as it did, as access logs print it
// (%RESPONSE_FLAGS%) and the response_flag filter matches it. The bit values are Envoy 1.16's.

export const enum ResponseFlag {
  FailedLocalHealthCheck = 0x1,
  NoHealthyUpstream = 0x2,
  UpstreamRequestTimeout = 0x4,
  LocalReset = 0x8,
  UpstreamRemoteReset = 0x10,
  UpstreamConnectionFailure = 0x20,
  UpstreamConnectionTermination = 0x40,
  UpstreamOverflow = 0x80,
  NoRouteFound = 0x100,
  DelayInjected = 0x200,
  FaultInjected = 0x400,
  RateLimited = 0x800,
  UnauthorizedExternalService = 0x1000,
  RateLimitServiceError = 0x2000,
  DownstreamConnectionTermination = 0x4000,
  UpstreamRetryLimitExceeded = 0x8000,
  StreamIdleTimeout = 0x10000,
  InvalidEnvoyRequestHeaders = 0x20000,
  DownstreamProtocolError = 0x40000,
  UpstreamMaxStreamDurationReached = 0x80000,
  ResponseFromCacheFilter = 0x100000,
  NoFilterConfigFound = 0x200000,
  DurationTimeout = 0x400000,
}
