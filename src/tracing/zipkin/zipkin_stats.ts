// The Zipkin tracer's statistics, `tracing.zipkin.*` at the root as in Envoy: shared by every
// Zipkin tracer of the process.

import type { Counter, Scope } from '../../stats/stats';

export class ZipkinStats {
  /** Spans handed to the collector in a report. */
  readonly spans_sent: Counter;
  /** Reports the collector accepted (202). */
  readonly reports_sent: Counter;
  /** Reports answered otherwise. */
  readonly reports_dropped: Counter;
  /** Reports that got no answer (reset), or had no collector cluster to go to. */
  readonly reports_failed: Counter;
  /** Flushes made by the flush interval. */
  readonly timer_flushed: Counter;

  constructor(root: Scope) {
    const scope = root.scope('tracing.zipkin');
    this.spans_sent = scope.counter('spans_sent');
    this.reports_sent = scope.counter('reports_sent');
    this.reports_dropped = scope.counter('reports_dropped');
    this.reports_failed = scope.counter('reports_failed');
    this.timer_flushed = scope.counter('timer_flushed');
  }
}
