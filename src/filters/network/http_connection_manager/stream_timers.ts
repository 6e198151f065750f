// A downstream stream's timers, as Envoy's ActiveStream has them: request_timeout (the whole
// request must arrive in time), stream_idle_timeout (no progress either way) and
// common_http_protocol_options.max_stream_duration (the stream's whole life). Shared by every
// protocol's streams; each timeout is counted, then handed to the stream.

import type { Clock, Timer } from '../../../common/clock';
import type { HttpConnectionManagerStats } from './stats';

export interface StreamTimerSettings {
  readonly requestTimeoutMs: number;
  readonly streamIdleTimeoutMs: number;
  readonly maxStreamDurationMs: number;
}

export interface TimedStream {
  /**
   * A timer ran out: 408 with `body` if nothing was answered yet, else the stream is reset.
   * @param details Envoy's response code details for it
   * @param idle the stream idle timeout (response flag SI)
   */
  onStreamTimeout(body: string, details: string, idle: boolean): void;
}

/**
 * Reusable from stream to stream, as the HTTP/1 stream is: each timer is created the first time
 * it is armed and enabled again for the next stream. dispose() releases them.
 */
export class StreamTimers {
  private requestTimer: Timer | null = null;
  private idleTimer: Timer | null = null;
  private durationTimer: Timer | null = null;

  constructor(
    private readonly settings: StreamTimerSettings,
    private readonly clock: Clock,
    private readonly stats: HttpConnectionManagerStats,
    private readonly stream: TimedStream,
  ) {}

  /** A stream began; `requestComplete`: its request has nothing more to arrive. */
  start(requestComplete: boolean): void {
    const settings = this.settings;
    if (settings.streamIdleTimeoutMs > 0) (this.idleTimer ??= this.clock.createTimer(this.onIdleTimeout)).enable(settings.streamIdleTimeoutMs);
    if (settings.requestTimeoutMs > 0 && !requestComplete) (this.requestTimer ??= this.clock.createTimer(this.onRequestTimeout)).enable(settings.requestTimeoutMs);
    if (settings.maxStreamDurationMs > 0) (this.durationTimer ??= this.clock.createTimer(this.onMaxDuration)).enable(settings.maxStreamDurationMs);
  }

  /** The route's idle_timeout replaces stream_idle_timeout for this stream from now; 0 disables it. */
  setIdleTimeout(ms: number): void {
    if (ms === 0) this.idleTimer?.disable();
    else (this.idleTimer ??= this.clock.createTimer(this.onIdleTimeout)).enable(ms);
  }

  /** Envoy's activity mark for stream_idle_timeout: any request or response progress. */
  touch(): void {
    this.idleTimer?.refresh();
  }

  /** The whole request arrived: request_timeout no longer applies. */
  requestComplete(): void {
    this.requestTimer?.disable();
  }

  /** The stream ended; the timers stay for the next one. */
  stop(): void {
    this.requestTimer?.disable();
    this.idleTimer?.disable();
    this.durationTimer?.disable();
  }

  /** The stream or its connection is gone for good. */
  dispose(): void {
    this.requestTimer?.close();
    this.idleTimer?.close();
    this.durationTimer?.close();
  }

  private readonly onRequestTimeout = (): void => {
    this.stats.downstream_rq_timeout.inc();
    this.stream.onStreamTimeout('request timeout', 'request_overall_timeout', false);
  };

  private readonly onIdleTimeout = (): void => {
    this.stats.downstream_rq_idle_timeout.inc();
    this.stream.onStreamTimeout('stream timeout', 'stream_idle_timeout', true);
  };

  private readonly onMaxDuration = (): void => {
    this.stats.downstream_rq_max_duration_reached.inc();
    this.stream.onStreamTimeout('downstream duration timeout', 'max_duration_timeout', false);
  };
}
