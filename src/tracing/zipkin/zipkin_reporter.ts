// A worker's Zipkin reporter (Envoy's ReporterImpl and SpanBuffer): finished spans wait in a
// buffer, sent as one Zipkin v2 JSON report when it holds runtime `tracing.zipkin.min_flush_spans`
// (default 5) of them and every `tracing.zipkin.flush_interval_ms` (default 5000), by a POST
// through the async client to the collector cluster, off any request's path. The buffer holds as
// many spans as min_flush_spans said when the reporter was made; spans beyond are dropped.

import type { Timer } from '../../common/clock';
import type { ZipkinTracerConfig } from '../../config/model';
import { RequestHead } from '../../http/message';
import type { AsyncRequest, AsyncRequestCallbacks, AsyncResponse } from '../../upstream/worker/async_client';
import type { TracerContext } from '../tracer';
import { type ZipkinEndpoint, zipkinJsonV2 } from './zipkin_json';
import type { ZipkinSpan } from './zipkin_span';
import type { ZipkinStats } from './zipkin_stats';

const MIN_FLUSH_SPANS = 'tracing.zipkin.min_flush_spans';
const FLUSH_INTERVAL_MS = 'tracing.zipkin.flush_interval_ms';
const REQUEST_TIMEOUT_MS = 'tracing.zipkin.request_timeout';
/** The collector's answer to a report it took. */
const ACCEPTED = 202;

export class ZipkinReporter {
  private spans: ZipkinSpan[] = [];
  private readonly capacity: number;
  private readonly timer: Timer;
  private readonly endpoint: ZipkinEndpoint;
  /** Reports awaiting the collector's answer, cancelled when the worker stops. */
  private readonly reports = new Map<CollectorReport, AsyncRequest>();

  constructor(
    private readonly config: ZipkinTracerConfig,
    private readonly context: TracerContext,
    private readonly stats: ZipkinStats,
  ) {
    this.capacity = context.runtime.snapshot().getInteger(MIN_FLUSH_SPANS, 5);
    this.endpoint = { serviceName: context.node.cluster, address: context.localAddress };
    this.timer = context.clock.createTimer(this.onFlushTimer);
    this.enableTimer();
  }

  readonly report = (span: ZipkinSpan): void => {
    if (this.spans.length >= this.capacity) return;
    this.spans.push(span);
    if (this.spans.length === this.context.runtime.snapshot().getInteger(MIN_FLUSH_SPANS, 5)) this.flush();
  };

  close(): void {
    this.timer.close();
    for (const request of this.reports.values()) request.cancel();
    this.reports.clear();
    this.spans = [];
  }

  private readonly onFlushTimer = (): void => {
    this.stats.timer_flushed.inc();
    this.flush();
    this.enableTimer();
  };

  private enableTimer(): void {
    this.timer.enable(this.context.runtime.snapshot().getInteger(FLUSH_INTERVAL_MS, 5000));
  }

  private flush(): void {
    const spans = this.spans;
    if (spans.length === 0) return;
    this.spans = [];
    this.stats.spans_sent.add(spans.length);
    const cluster = this.context.clusters.get(this.config.collectorCluster);
    // CDS removed the collector's cluster: the report has nowhere to go.
    if (cluster === undefined) {
      this.stats.reports_failed.inc();
      return;
    }
    const body = Buffer.from(zipkinJsonV2(spans, this.endpoint, this.config.sharedSpanContext));
    const head = new RequestHead('POST', this.config.collectorEndpoint, false);
    head.authority = this.config.collectorHostname;
    head.contentLength = head.bodyLength = body.length;
    head.headers.push('content-type', 'application/json');
    const timeoutMs = this.context.runtime.snapshot().getInteger(REQUEST_TIMEOUT_MS, 5000);
    const report = new CollectorReport(this.stats, this.reports);
    const request = this.context.asyncClient.send(cluster, head, [body], null, report, { timeoutMs, keepResponseBody: false });
    if (request !== null) this.reports.set(report, request);
  }
}

/** One report's answer, counted. */
class CollectorReport implements AsyncRequestCallbacks {
  constructor(
    private readonly stats: ZipkinStats,
    private readonly pending: Map<CollectorReport, AsyncRequest>,
  ) {}

  onSuccess(response: AsyncResponse): void {
    this.pending.delete(this);
    if (response.head.status === ACCEPTED) this.stats.reports_sent.inc();
    else this.stats.reports_dropped.inc();
  }

  onFailure(): void {
    this.pending.delete(this);
    this.stats.reports_failed.inc();
  }
}
