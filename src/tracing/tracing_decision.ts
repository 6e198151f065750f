// Whether a request is traced, as Envoy 1.16's connection manager decides it: first the request
// id is marked (ConnectionManagerUtility::mutateTracingRequestHeader), by the client's ask, a
// trusted client's force, or random sampling, and overall sampling may unmark it; then the mark
// decides (HttpTracerUtility::isTracing). Each sampling is a runtime feature with the
// configured percentage as its default. Pure.

import type { FractionalPercent } from '../config/model';
import type { Runtime } from '../runtime/runtime';
import { requestIdModulo, TraceStatus, traceStatusOf, withTraceStatus } from './trace_status';

/** The connection manager's samplings, or a route's in their place. */
export interface TracingSamplings {
  readonly clientSampling: FractionalPercent;
  readonly randomSampling: FractionalPercent;
  readonly overallSampling: FractionalPercent;
}

/** What the request says for itself. */
export interface TraceRequestFacts {
  /** It carries x-client-trace-id. */
  readonly clientTraceId: boolean;
  /** It carries x-proxy-force-trace and comes from a trusted (internal) client. */
  readonly forceTrace: boolean;
}

/** Envoy's Tracing::Reason, each charged to its counter. */
export const enum TracingReason {
  NotTraceable,
  HealthCheck,
  Sampling,
  ServiceForced,
  ClientForced,
}

export interface TracingDecision {
  readonly reason: TracingReason;
  readonly traced: boolean;
}

/** The denominator of the request id's draw, as Envoy takes it. */
const DRAW_RANGE = 10_000;

/**
 * The request id marked for this request: unchanged when it is no UUID with a hexadecimal
 * start. A request already marked (by a proxy before us) keeps its mark unless overall sampling
 * takes it away. `random` draws the client sampling; random and overall sampling draw from the
 * request id itself, so that every proxy decides a request alike.
 */
export function markedRequestId(requestId: string, samplings: TracingSamplings, facts: TraceRequestFacts, runtime: Runtime, random: number): string {
  const draw = requestIdModulo(requestId, DRAW_RANGE);
  if (draw === null) return requestId;
  let marked = requestId;
  if (traceStatusOf(requestId) === TraceStatus.NoTrace) {
    if (facts.clientTraceId && runtime.featureEnabled('tracing.client_enabled', samplings.clientSampling, random)) {
      marked = withTraceStatus(requestId, TraceStatus.Client);
    } else if (facts.forceTrace) {
      marked = withTraceStatus(requestId, TraceStatus.Forced);
    } else if (runtime.featureEnabled('tracing.random_sampling', samplings.randomSampling, draw)) {
      marked = withTraceStatus(requestId, TraceStatus.Sampled);
    }
  }
  if (!runtime.featureEnabled('tracing.global_enabled', samplings.overallSampling, draw)) marked = withTraceStatus(marked, TraceStatus.NoTrace);
  return marked;
}

/** Envoy's isTracing: a health check never; otherwise as the request id is marked. */
export function tracingDecision(requestId: string | undefined, healthCheck: boolean): TracingDecision {
  if (healthCheck) return { reason: TracingReason.HealthCheck, traced: false };
  switch (requestId === undefined ? TraceStatus.NoTrace : traceStatusOf(requestId)) {
    case TraceStatus.Client:
      return { reason: TracingReason.ClientForced, traced: true };
    case TraceStatus.Forced:
      return { reason: TracingReason.ServiceForced, traced: true };
    case TraceStatus.Sampled:
      return { reason: TracingReason.Sampling, traced: true };
    default:
      return { reason: TracingReason.NotTraceable, traced: false };
  }
}
