// A downstream stream's timers, as Envoy's ActiveStream has them: request_timeout (the whole
// request must arrive in time), stream_idle_timeout (no progress either way) and
// common_http_protocol_options.max_stream_duration (the stream's whole life). Shared by the
// HTTP/1 and HTTP/2 connection managers; each timeout is counted, then handed to the stream.

import type { HttpConnectionManagerStats } from './stats';
import { boundedTimerDelay } from '../../../common/clock';

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
 * Reusable from stream to stream, as the HTTP/1 manager needs: each timer is created once and
 * refreshed when armed again, and one that fires after stop() is ignored. dispose() clears them.
 */
export class StreamTimers {
  private requestTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private durationTimer: NodeJS.Timeout | null = null;
  private requestArmed = false;
  private idleArmed = false;
  private durationArmed = false;

  constructor(
    private readonly settings: StreamTimerSettings,
    private readonly stats: HttpConnectionManagerStats,
    private readonly stream: TimedStream,
  ) {}

  /** A stream began; `requestComplete`: its request has nothing more to arrive. */
  start(requestComplete: boolean): void {
    const settings = this.settings;
    if (settings.streamIdleTimeoutMs > 0) {
      this.idleArmed = true;
      this.idleTimer = rearm(this.idleTimer, settings.streamIdleTimeoutMs, this.onIdleTimeout);
    }
    if (settings.requestTimeoutMs > 0 && !requestComplete) {
      this.requestArmed = true;
      this.requestTimer = rearm(this.requestTimer, settings.requestTimeoutMs, this.onRequestTimeout);
    }
    if (settings.maxStreamDurationMs > 0) {
      this.durationArmed = true;
      this.durationTimer = rearm(this.durationTimer, settings.maxStreamDurationMs, this.onMaxDuration);
    }
  }

  /** Envoy's activity mark for stream_idle_timeout: any request or response progress. */
  touch(): void {
    if (this.idleArmed) this.idleTimer!.refresh();
  }

  /** The whole request arrived: request_timeout no longer applies. */
  requestComplete(): void {
    this.requestArmed = false;
  }

  /** The stream ended; the timers stay for the next one. */
  stop(): void {
    this.requestArmed = false;
    this.idleArmed = false;
    this.durationArmed = false;
  }

  /** The stream or its connection is gone for good. */
  dispose(): void {
    this.stop();
    for (const timer of [this.requestTimer, this.idleTimer, this.durationTimer]) {
      if (timer !== null) clearTimeout(timer);
    }
  }

  private readonly onRequestTimeout = (): void => {
    if (!this.requestArmed) return;
    this.requestArmed = false;
    this.stats.downstream_rq_timeout.inc();
    this.stream.onStreamTimeout('request timeout', 'request_overall_timeout', false);
  };

  private readonly onIdleTimeout = (): void => {
    if (!this.idleArmed) return;
    this.idleArmed = false;
    this.stats.downstream_rq_idle_timeout.inc();
    this.stream.onStreamTimeout('stream timeout', 'stream_idle_timeout', true);
  };

  private readonly onMaxDuration = (): void => {
    if (!this.durationArmed) return;
    this.durationArmed = false;
    this.stats.downstream_rq_max_duration_reached.inc();
    this.stream.onStreamTimeout('downstream duration timeout', 'max_duration_timeout', false);
  };
}

/** Arms `timer` again, or creates it the first time. */
function rearm(timer: NodeJS.Timeout | null, ms: number, onTimeout: () => void): NodeJS.Timeout {
  return timer === null ? setTimeout(onTimeout, boundedTimerDelay(ms)) : timer.refresh();
}
