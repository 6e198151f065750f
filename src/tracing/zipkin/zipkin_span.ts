// One Zipkin span of a request (Envoy's Zipkin::Span behind its ZipkinSpan): its ids, its kind,
// when it started and how long it took, its tags and the stream events logged on it. A sampled
// span goes to the reporter when it finishes.

import type { Span } from '../tracer';
import { injectB3, type SpanContext } from './b3';

/** SERVER for a span Envoy opens with a server-receive (sr), CLIENT for a client-send (cs). */
export type SpanKind = 'SERVER' | 'CLIENT';

export interface SpanAnnotation {
  readonly timestamp: number;
  readonly value: string;
}

export class ZipkinSpan implements Span {
  /** Microseconds from start to finish. */
  duration = 0;
  /** Tag name -> value; a tag set again replaces the value. */
  readonly tags = new Map<string, string>();
  /** Logged events; null when none. */
  annotations: SpanAnnotation[] | null = null;

  /**
   * @param timestamp when the span started, in microseconds since the epoch
   * @param report takes the span when it finishes sampled
   */
  constructor(
    readonly context: SpanContext,
    readonly kind: SpanKind,
    readonly timestamp: number,
    public name: string,
    private readonly report: (span: ZipkinSpan) => void,
  ) {}

  setOperation(name: string): void {
    this.name = name;
  }

  setTag(name: string, value: string): void {
    if (name !== '' && value !== '') this.tags.set(name, value);
  }

  log(micros: number, event: string): void {
    (this.annotations ??= []).push({ timestamp: micros, value: event });
  }

  injectContext(headers: string[]): void {
    injectB3(headers, this.context);
  }

  finish(durationMicros: number): void {
    this.duration = durationMicros;
    if (this.context.sampled) this.report(this);
  }
}
