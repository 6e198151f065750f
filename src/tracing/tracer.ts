// What the connection manager asks of a tracer (Envoy's Tracing::Driver and Span): a span for
// each request, its context taken from the request's headers and passed on in the headers sent
// upstream. Each tracer (src/tracing/zipkin) reports its finished spans its own way.

import type { Clock } from '../common/clock';
import type { RandomSource } from '../common/random';
import type { NodeInfo, TracerConfig } from '../config/model';
import type { RequestHead } from '../http/message';
import type { RuntimeSource } from '../runtime/live_runtime';
import type { StatsStore } from '../stats/stats';
import type { AsyncClient } from '../upstream/worker/async_client';
import type { ClusterManager } from '../upstream/worker/cluster_manager';

/** The connection manager's side of the call: a listener's traffic_direction OUTBOUND makes it egress. */
export type OperationName = 'ingress' | 'egress';

export interface Span {
  /** The span's name (a route's decorator). */
  setOperation(name: string): void;
  /** An empty name or value sets nothing. */
  setTag(name: string, value: string): void;
  /** An event of the stream at `micros` since the epoch. */
  log(micros: number, event: string): void;
  /** The span's context, set in the request headers sent upstream, [name, value, ...] (replaced). */
  injectContext(headers: string[]): void;
  /** The span ended, `durationMicros` after it started: reported when sampled. */
  finish(durationMicros: number): void;
}

export interface Tracer {
  /**
   * The request's span, a child of (or, for a server span with a shared context, one with) the
   * span its headers name; null when they name one malformedly (Envoy's null span: not traced).
   * @param traced the connection manager's decision, which a sampling flag in the headers overrides
   * @param timestampMicros when the request started, in microseconds since the epoch
   */
  startSpan(head: RequestHead, operation: OperationName, traced: boolean, timestampMicros: number): Span | null;
  /** The worker stops: timers go, nothing more is reported. */
  close(): void;
}

/** What a tracer is made with, once per worker. */
export interface TracerContext {
  readonly clusters: ClusterManager;
  /** Where reports go. */
  readonly asyncClient: AsyncClient;
  readonly clock: Clock;
  readonly runtime: RuntimeSource;
  readonly random: RandomSource;
  /** Where tracer statistics (`tracing.<tracer>.*`) are counted. */
  readonly stats: StatsStore;
  /** The node (after --service-* overrides): its cluster names the service in spans. */
  readonly node: NodeInfo;
  /** The server's local address, the spans' endpoint; undefined when unknown. */
  readonly localAddress: string | undefined;
}

/** A tracer extension's factory (its descriptor's, src/extensions/tracers). */
export type TracerFactory = (config: TracerConfig, context: TracerContext) => Tracer;
