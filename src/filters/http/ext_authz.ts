// proxy.filters.http.ext_authz (Envoy 1.16's ExtAuthz HTTP filter): each request routed to a
// cluster is held while its authorization service (HTTP or gRPC, ext_authz_client.ts) checks it;
// with with_request_body, once its body is held (all of it, or max_request_bytes of it when
// allow_partial_message, else 413 past that). Allowed: the service's headers go on the request,
// which goes on. Denied: the service's status, headers and body answer it (`ext_authz_denied`).
// An error answers status_on_error (`ext_authz_error`) unless failure_mode_allow lets the
// request go on. A route's ExtAuthzPerRoute disables the check or adds context extensions;
// filter_enabled checks only a share of requests, deny_at_disable answers the others. Denials
// and errors flag UAEX. Counted in `http.<stat_prefix>.ext_authz.` and in the route's cluster's
// `cluster.<name>.ext_authz.` (ok, denied, error, failure_mode_allowed).

import type { ExtAuthzConfig, ExtAuthzPerRouteConfig, RouteConfiguration } from '../../config/model';
import { EXT_AUTHZ } from '../../config/names';
import { type RequestHead, removeHeaders, setHeader } from '../../http/message';
import type { Counter, Scope } from '../../stats/stats';
import { ResponseFlag } from '../../stream_info/response_flags';
import type { AsyncRequest } from '../../upstream/worker/async_client';
import { checkRequest } from './ext_authz_check_request';
import type { AuthzClient } from './ext_authz_client';
import type { AuthzResponse } from './ext_authz_response';
import { FilterDataStatus, FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory, type RouteEntry, routeClusterName } from './http_filter';
import type { HttpFilterFactoryContext } from './http_filter_registry';
import { mostSpecificPerFilterConfig, perFilterConfigChain, perFilterConfigsOf } from './per_filter_config';

const DENIED_DETAILS = 'ext_authz_denied';
const ERROR_DETAILS = 'ext_authz_error';
const NO_EXTENSIONS: Readonly<Record<string, string>> = {};
const NO_METADATA: Readonly<Record<string, unknown>> = {};
/** What frames the reply, which the codec writes from the reply's own length. */
const REPLY_FRAMING: ReadonlySet<string> = new Set(['content-length', 'transfer-encoding', 'connection']);

/** Envoy's ExtAuthzFilterStats, in one scope. */
class ExtAuthzCounters {
  readonly ok: Counter;
  readonly denied: Counter;
  readonly error: Counter;
  readonly failureModeAllowed: Counter;

  constructor(scope: Scope) {
    this.ok = scope.counter('ok');
    this.denied = scope.counter('denied');
    this.error = scope.counter('error');
    this.failureModeAllowed = scope.counter('failure_mode_allowed');
  }
}

export class ExtAuthzFilterFactory implements HttpFilterFactory {
  readonly counters: ExtAuthzCounters;
  /** Some route configuration the connection manager has served has an ExtAuthzPerRoute: requests look for context extensions. */
  perRoute = false;
  /** The route's cluster's counters, by cluster name, made on first use. */
  private readonly clusterCounters = new Map<string, ExtAuthzCounters>();

  constructor(
    readonly config: ExtAuthzConfig,
    readonly context: HttpFilterFactoryContext,
    readonly client: AuthzClient,
  ) {
    this.counters = new ExtAuthzCounters(context.scope.scope('ext_authz'));
    this.prepareRoutes(context.routeConfig);
  }

  prepareRoutes(routeConfig: RouteConfiguration): void {
    // Never unset: a request routed by an earlier configuration may still look.
    this.perRoute ||= perFilterConfigsOf(routeConfig, EXT_AUTHZ).length > 0;
  }

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new ExtAuthzFilter(this, callbacks);
  }

  /** Whether filter_enabled lets this request be checked. */
  enabled(): boolean {
    const fraction = this.config.filterEnabled;
    return fraction === undefined || this.context.runtime.snapshot().featureEnabled(fraction.runtimeKey, fraction.defaultValue, this.context.random());
  }

  /** Whether deny_at_disable answers a request the filter is disabled for. */
  denyAtDisable(): boolean {
    const flag = this.config.denyAtDisable;
    return flag !== undefined && this.context.runtime.snapshot().getBoolean(flag.runtimeKey, flag.defaultValue);
  }

  /** `cluster.<name>.ext_authz.`'s counters; null when the cluster is unknown. */
  countersOfCluster(name: string): ExtAuthzCounters | null {
    const cluster = this.context.clusters.get(name);
    if (cluster === undefined) return null;
    let counters = this.clusterCounters.get(name);
    if (counters === undefined) {
      counters = new ExtAuthzCounters(this.context.stats.scope(`cluster.${cluster.info.statName}.ext_authz`));
      this.clusterCounters.set(name, counters);
    }
    return counters;
  }
}

const enum State {
  /** No check for this request (yet). */
  Idle,
  /** Holding the body the check is to carry. */
  Buffering,
  Calling,
  Complete,
}

class ExtAuthzFilter implements HttpFilter {
  // Per request; reset by decodeHeaders.
  private state = State.Idle;
  private head: RequestHead | null = null;
  private entry: RouteEntry | null = null;
  /** Request body bytes this filter held. */
  private held = 0;
  private call: AsyncRequest | null = null;
  /** The request waits for the check's answer. */
  private stopped = false;
  /** The check is being sent: an answer that comes at once is returned, not continued. */
  private initiating = false;
  private clusterCounters: ExtAuthzCounters | null = null;

  constructor(
    private readonly factory: ExtAuthzFilterFactory,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(head: RequestHead, endStream: boolean): FilterHeadersStatus {
    this.state = State.Idle;
    this.held = 0;
    this.stopped = false;
    const entry = this.callbacks.route();
    if (entry === null || entry.route.action.kind !== 'route' || mostSpecificPerFilterConfig(entry, EXT_AUTHZ)?.disabled === true) return FilterHeadersStatus.Continue;
    const factory = this.factory;
    if (!factory.enabled()) {
      if (!factory.denyAtDisable()) return FilterHeadersStatus.Continue;
      this.callbacks.info?.setResponseFlag(ResponseFlag.UnauthorizedExternalService);
      this.callbacks.sendLocalReply(factory.config.statusOnError, '', undefined, ERROR_DETAILS);
      return FilterHeadersStatus.StopIteration;
    }
    this.head = head;
    this.entry = entry;
    const body = factory.config.withRequestBody;
    // An upgrade's body is the new protocol's, never held.
    if (body !== null && !endStream && head.upgrade === null) {
      this.state = State.Buffering;
      if (!body.allowPartialMessage) this.callbacks.setDecoderBufferLimit(body.maxRequestBytes);
      return FilterHeadersStatus.StopIteration;
    }
    this.initiateCall(null);
    return this.stopped ? FilterHeadersStatus.StopIteration : FilterHeadersStatus.Continue;
  }

  decodeData(chunk: Buffer): FilterDataStatus {
    if (this.state === State.Buffering) {
      const body = this.factory.config.withRequestBody!;
      // As Envoy: a partial body is what was held before the chunk that found the buffer full.
      if (body.allowPartialMessage && this.held >= body.maxRequestBytes) {
        this.initiateCall(this.callbacks.decodingBuffer());
        return this.stopped ? FilterDataStatus.StopIterationAndBuffer : FilterDataStatus.Continue;
      }
      this.held += chunk.length;
      return FilterDataStatus.StopIterationAndBuffer;
    }
    return this.stopped ? FilterDataStatus.StopIterationAndBuffer : FilterDataStatus.Continue;
  }

  decodeComplete(): FilterHeadersStatus {
    if (this.state === State.Buffering) this.initiateCall(this.callbacks.decodingBuffer());
    return this.stopped ? FilterHeadersStatus.StopIteration : FilterHeadersStatus.Continue;
  }

  onStreamEnd(): void {
    this.call?.cancel();
    this.call = null;
    this.stopped = false;
    this.state = State.Idle;
    this.head = null;
    this.entry = null;
  }

  private initiateCall(body: Buffer | null): void {
    const { factory, callbacks } = this;
    const head = this.head!;
    const entry = this.entry!;
    const config = factory.config;
    const check = checkRequest({
      head,
      downstream: callbacks.downstream,
      body,
      maxRequestBytes: config.withRequestBody?.maxRequestBytes ?? 0,
      size: this.held,
      contextExtensions: factory.perRoute ? contextExtensions(perFilterConfigChain(entry, EXT_AUTHZ)) : NO_EXTENSIONS,
      metadataContext: this.metadataContext(),
      includePeerCertificate: config.includePeerCertificate,
    });
    this.state = State.Calling;
    this.stopped = true;
    this.clusterCounters = factory.countersOfCluster(routeClusterName(entry, head));
    this.initiating = true;
    const call = factory.client.check(check, this.onComplete);
    this.initiating = false;
    if (this.state === State.Calling) this.call = call;
  }

  /** The namespaces of the stream's dynamic metadata that metadata_context_namespaces names. */
  private metadataContext(): Readonly<Record<string, unknown>> {
    const namespaces = this.factory.config.metadataContextNamespaces;
    const metadata = this.callbacks.info?.dynamicMetadata ?? null;
    if (namespaces.length === 0 || metadata === null) return NO_METADATA;
    const context: Record<string, unknown> = {};
    for (const namespace of namespaces) {
      const struct = metadata.get(namespace);
      if (struct !== undefined) context[namespace] = struct;
    }
    return context;
  }

  private readonly onComplete = (response: AuthzResponse): void => {
    this.call = null;
    this.state = State.Complete;
    const { factory, callbacks } = this;
    const own = factory.counters;
    const cluster = this.clusterCounters;
    switch (response.kind) {
      case 'ok': {
        if (factory.config.clearRouteCache && (response.headersToSet.length > 0 || response.headersToAppend.length > 0)) callbacks.clearRouteCache();
        applyAllowedHeaders(this.head!, response.headersToSet, response.headersToAdd, response.headersToAppend);
        const info = callbacks.info;
        if (response.dynamicMetadata !== null && info !== null) (info.dynamicMetadata ??= new Map()).set(EXT_AUTHZ, response.dynamicMetadata);
        cluster?.ok.inc();
        own.ok.inc();
        this.continueDecoding();
        return;
      }
      case 'denied': {
        own.denied.inc();
        if (cluster !== null) {
          cluster.denied.inc();
          factory.context.clusters.get(routeClusterName(this.entry!, this.head!))?.info.stats.chargeResponseCode(response.status, true);
        }
        const headers = response.headers;
        callbacks.info?.setResponseFlag(ResponseFlag.UnauthorizedExternalService);
        callbacks.sendLocalReply(response.status, response.body, undefined, DENIED_DETAILS, undefined, (reply) => replaceHeaders(reply, headers));
        return;
      }
      case 'error': {
        cluster?.error.inc();
        own.error.inc();
        if (factory.config.failureModeAllow) {
          own.failureModeAllowed.inc();
          cluster?.failureModeAllowed.inc();
          this.continueDecoding();
          return;
        }
        callbacks.info?.setResponseFlag(ResponseFlag.UnauthorizedExternalService);
        callbacks.sendLocalReply(factory.config.statusOnError, '', undefined, ERROR_DETAILS);
        return;
      }
    }
  };

  private continueDecoding(): void {
    this.stopped = false;
    if (!this.initiating) this.callbacks.continueDecoding();
  }
}

/** The route's context extensions, the more specific levels' keys over the others'. */
function contextExtensions(chain: readonly ExtAuthzPerRouteConfig[]): Readonly<Record<string, string>> {
  return chain.length === 0 ? NO_EXTENSIONS : Object.assign({}, ...chain.map((config) => config.contextExtensions));
}

/** An allowed request's headers, changed as the service said (the path and authority are the head's). */
function applyAllowedHeaders(head: RequestHead, set: readonly string[], add: readonly string[], append: readonly string[]): void {
  const headers = head.headers;
  for (let i = 0; i < set.length; i += 2) {
    const name = set[i]!;
    const value = set[i + 1]!;
    if (name === ':path') head.path = value;
    else if (name === ':authority') head.authority = value;
    else if (!name.startsWith(':')) setHeader(headers, name, value);
  }
  for (let i = 0; i < add.length; i += 2) if (!add[i]!.startsWith(':')) headers.push(add[i]!, add[i + 1]!);
  // Envoy's appendCopy: to the header's first value, `,`-separated; nothing for a header the request lacks.
  for (let i = 0; i < append.length; i += 2) {
    for (let j = 0; j < headers.length; j += 2) {
      if (headers[j] !== append[i]) continue;
      headers[j + 1] = `${headers[j + 1]},${append[i + 1]}`;
      break;
    }
  }
}

/**
 * A denial's headers in place of the reply's own of their names (a name may come more than once:
 * set-cookie). The status and the length are the reply's own fields.
 */
function replaceHeaders(reply: string[], headers: readonly string[]): void {
  const names = new Set<string>();
  for (let i = 0; i < headers.length; i += 2) if (!REPLY_FRAMING.has(headers[i]!) && !headers[i]!.startsWith(':')) names.add(headers[i]!);
  removeHeaders(reply, (name) => names.has(name));
  for (let i = 0; i < headers.length; i += 2) if (names.has(headers[i]!)) reply.push(headers[i]!, headers[i + 1]!);
}
