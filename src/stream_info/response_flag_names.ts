// The short names of the response flags (Envoy 1.16's ResponseFlagUtils): what %RESPONSE_FLAGS%
// prints, comma-joined in this order, and what the response_flag access log filter accepts.

import { ResponseFlag } from './response_flags';

/** Envoy's order, which is the bits' order. */
export const RESPONSE_FLAG_NAMES: readonly (readonly [ResponseFlag, string])[] = [
  [ResponseFlag.FailedLocalHealthCheck, 'LH'],
  [ResponseFlag.NoHealthyUpstream, 'UH'],
  [ResponseFlag.UpstreamRequestTimeout, 'UT'],
  [ResponseFlag.LocalReset, 'LR'],
  [ResponseFlag.UpstreamRemoteReset, 'UR'],
  [ResponseFlag.UpstreamConnectionFailure, 'UF'],
  [ResponseFlag.UpstreamConnectionTermination, 'UC'],
  [ResponseFlag.UpstreamOverflow, 'UO'],
  [ResponseFlag.NoRouteFound, 'NR'],
  [ResponseFlag.DelayInjected, 'DI'],
  [ResponseFlag.FaultInjected, 'FI'],
  [ResponseFlag.RateLimited, 'RL'],
  [ResponseFlag.UnauthorizedExternalService, 'UAEX'],
  [ResponseFlag.RateLimitServiceError, 'RLSE'],
  [ResponseFlag.DownstreamConnectionTermination, 'DC'],
  [ResponseFlag.UpstreamRetryLimitExceeded, 'URX'],
  [ResponseFlag.StreamIdleTimeout, 'SI'],
  [ResponseFlag.InvalidEnvoyRequestHeaders, 'IH'],
  [ResponseFlag.DownstreamProtocolError, 'DPE'],
  [ResponseFlag.UpstreamMaxStreamDurationReached, 'UMSDR'],
  [ResponseFlag.ResponseFromCacheFilter, 'RFCF'],
  [ResponseFlag.NoFilterConfigFound, 'NFCF'],
  [ResponseFlag.DurationTimeout, 'DT'],
];

/** `UH,UF`; `-` when no flag is set, as Envoy prints it. */
export function responseFlagsString(flags: number): string {
  if (flags === 0) return '-';
  const names: string[] = [];
  for (const [flag, name] of RESPONSE_FLAG_NAMES) if ((flags & flag) !== 0) names.push(name);
  return names.join(',');
}

/** The flag of a short name; undefined for a name Envoy 1.16 does not know. */
export function responseFlagOfName(name: string): ResponseFlag | undefined {
  return RESPONSE_FLAG_NAMES.find(([, n]) => n === name)?.[0];
}
