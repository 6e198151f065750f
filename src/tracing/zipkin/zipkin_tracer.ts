// The Zipkin tracer of one worker (Envoy's Zipkin Driver and Tracer): a request's span continues
// the trace its B3 headers name, or starts one; ingress spans are SERVER spans, egress spans
// CLIENT spans. With shared_span_context (the default) a server span takes the id of the span
// that called it, as Zipkin's v1 model had client and server share one span; without it, the
// server span is that span's child.

import type { ZipkinTracerConfig } from '../../config/model';
import type { RequestHead } from '../../http/message';
import type { OperationName, Span, Tracer, TracerContext } from '../tracer';
import { extractSampled, extractSpanContext, MALFORMED, randomId, type SpanContext } from './b3';
import { ZipkinReporter } from './zipkin_reporter';
import { ZipkinSpan } from './zipkin_span';
import { ZipkinStats } from './zipkin_stats';

export class ZipkinTracer implements Tracer {
  private readonly reporter: ZipkinReporter;

  constructor(
    private readonly config: ZipkinTracerConfig,
    private readonly context: TracerContext,
  ) {
    this.reporter = new ZipkinReporter(config, context, new ZipkinStats(context.stats));
  }

  /** The span is named after the request's host, until a decorator names it. */
  startSpan(head: RequestHead, operation: OperationName, traced: boolean, timestampMicros: number): Span | null {
    const sampled = extractSampled(head.headers, traced);
    const parent = extractSpanContext(head.headers, sampled);
    if (parent === MALFORMED) return null;
    const kind = operation === 'egress' ? 'CLIENT' : 'SERVER';
    return new ZipkinSpan(this.spanContext(parent, operation, sampled), kind, timestampMicros, head.authority, this.reporter.report);
  }

  close(): void {
    this.reporter.close();
  }

  private spanContext(parent: SpanContext | null, operation: OperationName, sampled: boolean): SpanContext {
    const random = this.context.random;
    if (parent === null) {
      // A new trace: its root span's id is the trace id's lower half, as in Envoy.
      const id = randomId(random);
      return { traceIdHigh: this.config.traceId128Bit ? randomId(random) : null, traceId: id, spanId: id, parentId: null, sampled };
    }
    if (operation === 'ingress' && this.config.sharedSpanContext) return parent;
    return { traceIdHigh: parent.traceIdHigh, traceId: parent.traceId, spanId: randomId(random), parentId: parent.spanId, sampled: parent.sampled };
  }
}
