// A connection manager's tracing (Envoy 1.16's tracing config and ActiveStream::traceRequest):
// as a request's head has been sanitized and routed, its x-request-id is marked with the trace
// decision (first pass only: a recreated stream keeps the mark), the decision is counted, and its
// span starts, named by the route's decorator when it has one, its context set in the headers
// that go upstream. A route's own tracing replaces the manager's samplings and puts its tags
// first. Built once per connection manager and worker: every route's tags are made then.

import type { RandomSource } from '../common/random';
import type { HttpTracingConfig, NodeInfo, Route, RouteConfiguration, RouteTracingConfig } from '../config/model';
import { firstHeaderValue, hasHeader, type RequestHead, removeHeaders, setHeader } from '../http/message';
import type { TrustedClient } from '../http/trusted_client';
import type { RuntimeSource } from '../runtime/live_runtime';
import type { StreamInfo } from '../stream_info/stream_info';
import { type CustomTag, customTags } from './custom_tags';
import { DECORATOR_OPERATION, type SpanSettings, TracedRequest } from './traced_request';
import type { OperationName, Tracer } from './tracer';
import { markedRequestId, tracingDecision, type TracingSamplings } from './tracing_decision';
import type { ConnectionManagerTracingStats } from './tracing_stats';

/** What the tracing reads of the connection manager's stream. */
export interface TracedStream {
  /** The downstream peer's address: the peer.address tag. */
  readonly remoteAddress: string;
  /** Null only where nothing records streams, which tracing never is. */
  readonly info: StreamInfo | null;
  trustedClient(): TrustedClient;
  route(): { readonly route: Route } | null;
}

export interface HttpTracingDeps {
  /** The manager's provider, else the bootstrap's; null when neither names one (Envoy's null tracer: decisions and decorators, no spans). */
  readonly tracer: Tracer | null;
  /** egress when the listener's traffic_direction is OUTBOUND. */
  readonly operation: OperationName;
  readonly runtime: RuntimeSource;
  readonly random: RandomSource;
  readonly stats: ConnectionManagerTracingStats;
  /** node_id and zone tag every span. */
  readonly node: NodeInfo;
  readonly useRemoteAddress: boolean;
  /** Where environment custom tags read their variables. */
  readonly environment: NodeJS.ProcessEnv;
}

export class HttpTracing {
  private readonly settings: SpanSettings;
  private readonly tags: readonly CustomTag[];
  /** The tags of each route with tracing of its own (the route's, then the manager's), by that tracing; gone with the routes. */
  private readonly routeTags = new WeakMap<RouteTracingConfig, readonly CustomTag[]>();

  constructor(
    private readonly config: HttpTracingConfig,
    routes: RouteConfiguration,
    private readonly deps: HttpTracingDeps,
  ) {
    this.settings = { operation: deps.operation, verbose: config.verbose, maxPathTagLength: config.maxPathTagLength, useRemoteAddress: deps.useRemoteAddress };
    this.tags = customTags(config.customTags, [], deps.environment);
    this.prepareRoutes(routes);
  }

  /** The routes' tags, of the connection manager's first route configuration and of each RDS brings. */
  prepareRoutes(routes: RouteConfiguration): void {
    for (const virtualHost of routes.virtualHosts) {
      for (const route of virtualHost.routes) {
        if (route.tracing !== undefined) this.routeTags.set(route.tracing, customTags(route.tracing.customTags, this.tags, this.deps.environment));
      }
    }
  }

  /**
   * The request's span, started; `head` gets the trace decision in its x-request-id (on the
   * first pass) and the span's context. Null when the stream records nothing.
   * @param firstPass not a stream recreated for an internal redirect
   */
  startSpan(head: RequestHead, stream: TracedStream, firstPass: boolean): TracedRequest | null {
    const info = stream.info;
    if (info === null) return null;
    const { deps } = this;
    const route = stream.route()?.route ?? null;
    const routeTracing = route?.tracing;
    const headers = head.headers;
    if (firstPass) this.markRequestId(headers, routeTracing ?? this.config, stream);
    const decision = tracingDecision(firstHeaderValue(headers, 'x-request-id'), info.healthCheck);
    deps.stats.charge(decision.reason);
    const operation = deps.operation;
    const span = deps.tracer === null ? null : deps.tracer.startSpan(head, operation, decision.traced, info.startTime * 1000);
    if (span !== null) {
      span.setTag('node_id', deps.node.id);
      span.setTag('zone', deps.node.locality.zone);
    }
    let responseOperation: string | null = null;
    const decorator = route?.decorator;
    if (decorator !== undefined) {
      span?.setOperation(decorator.operation);
      // Egress tells the service called which operation it is; ingress tells the caller, on the response.
      if (decorator.propagate && operation === 'egress') setHeader(headers, DECORATOR_OPERATION, decorator.operation);
      else if (decorator.propagate) responseOperation = decorator.operation;
    }
    if (operation === 'ingress') {
      const override = firstHeaderValue(headers, DECORATOR_OPERATION);
      if (override !== undefined) {
        // The caller's name for the operation wins, and is not sent back.
        if (override !== '') {
          span?.setOperation(override);
          responseOperation = null;
        }
        removeHeaders(headers, (name) => name === DECORATOR_OPERATION);
      }
    }
    span?.injectContext(headers);
    const tags = routeTracing === undefined ? this.tags : this.routeTags.get(routeTracing)!;
    return new TracedRequest(this.settings, span, info.sinceStart(), tags, responseOperation, stream.remoteAddress);
  }

  /** Envoy's mutateTracingRequestHeader, on the request's x-request-id (in place). */
  private markRequestId(headers: string[], samplings: TracingSamplings, stream: TracedStream): void {
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i] !== 'x-request-id') continue;
      const facts = {
        clientTraceId: hasHeader(headers, 'x-client-trace-id'),
        // Only a trusted client may force a trace, as Envoy sanitizes the header from others.
        forceTrace: hasHeader(headers, 'x-proxy-force-trace') && stream.trustedClient().internal,
      };
      headers[i + 1] = markedRequestId(headers[i + 1]!, samplings, facts, this.deps.runtime.snapshot(), this.deps.random());
      return;
    }
  }
}
