// The flood limits of a downstream HTTP/2 connection (Envoy 1.16's ServerConnectionImpl checks,
// named as its later ProtocolConstraints): frames counted as they are read and as they wait to be
// written, against http2_protocol_options' limits, plus two of the proxy's own (rapid reset and
// CONTINUATION floods, both newer than 1.16). Pure: the time is given, the verdict returned.

import type { Clock } from '../../common/clock';
import type { Http2FloodLimits } from '../../config/model';
import { FrameFlag, FrameType } from './frame_scanner';

/** Which limit a connection broke: its `http2.*` counter's name. */
export type Flood =
  | 'outbound_flood'
  | 'outbound_control_flood'
  | 'inbound_empty_frames_flood'
  | 'inbound_priority_frames_flood'
  | 'inbound_window_update_frames_flood'
  | 'inbound_rst_stream_frames_flood'
  | 'inbound_continuation_frames_flood';

/** CVE-2023-44487: more RST_STREAM frames than this from the client within RAPID_RESET_WINDOW_MS closes the connection. */
export const MAX_INBOUND_RESETS_PER_WINDOW = 100;
export const RAPID_RESET_WINDOW_MS = 1000;
/** CVE-2024-27316 and kin: a header block in more CONTINUATION frames than this (nghttp2's own bound) closes the connection. */
export const MAX_CONTINUATION_FRAMES = 8;

export class ProtocolConstraints {
  private outboundFrames = 0;
  private outboundControlFrames = 0;
  private outboundDataFrames = 0;
  private inboundStreams = 0;
  private consecutiveEmptyFrames = 0;
  private inboundPriorityFrames = 0;
  private inboundWindowUpdateFrames = 0;
  private continuationFrames = 0;
  private resetsInWindow = 0;
  private resetWindowStartMs = -Infinity;

  constructor(private readonly limits: Http2FloodLimits) {}

  /**
   * A frame read from the client, counted as Envoy's trackInboundFrames does (`padding`
   * includes the Pad Length byte); the clock is read only for RST_STREAM. Returns the limit it
   * broke, if any.
   */
  onInboundFrame(type: number, flags: number, length: number, padding: number, clock: Pick<Clock, 'now'>): Flood | null {
    const limits = this.limits;
    switch (type) {
      case FrameType.HEADERS:
        if ((flags & FrameFlag.END_HEADERS) !== 0) this.inboundStreams++;
        this.continuationFrames = 0;
        return this.onFrameWithPayload(flags, length - padding);
      case FrameType.CONTINUATION:
        if ((flags & FrameFlag.END_HEADERS) !== 0) this.inboundStreams++;
        if (++this.continuationFrames > MAX_CONTINUATION_FRAMES) return 'inbound_continuation_frames_flood';
        return this.onFrameWithPayload(flags, length);
      case FrameType.DATA:
        return this.onFrameWithPayload(flags, length - padding);
      case FrameType.PRIORITY:
        this.inboundPriorityFrames++;
        return this.inboundPriorityFrames > limits.maxInboundPriorityFramesPerStream * (1 + this.inboundStreams) ? 'inbound_priority_frames_flood' : null;
      case FrameType.WINDOW_UPDATE:
        this.inboundWindowUpdateFrames++;
        return this.inboundWindowUpdateFrames > 1 + 2 * (this.inboundStreams + limits.maxInboundWindowUpdateFramesPerDataFrameSent * this.outboundDataFrames)
          ? 'inbound_window_update_frames_flood'
          : null;
      case FrameType.RST_STREAM: {
        const now = clock.now();
        if (now - this.resetWindowStartMs >= RAPID_RESET_WINDOW_MS) {
          this.resetWindowStartMs = now;
          this.resetsInWindow = 0;
        }
        return ++this.resetsInWindow > MAX_INBOUND_RESETS_PER_WINDOW ? 'inbound_rst_stream_frames_flood' : null;
      }
      default:
        return null;
    }
  }

  /** HEADERS, CONTINUATION or DATA: counts the consecutive ones with no payload that do not end the stream. */
  private onFrameWithPayload(flags: number, payload: number): Flood | null {
    if (payload === 0 && (flags & FrameFlag.END_STREAM) === 0) {
      return ++this.consecutiveEmptyFrames > this.limits.maxConsecutiveInboundFramesWithEmptyPayload ? 'inbound_empty_frames_flood' : null;
    }
    this.consecutiveEmptyFrames = 0;
    return null;
  }

  /**
   * Frames handed to the socket and not yet written out: Envoy's output buffer. Control frames
   * are PING and SETTINGS acknowledgements and RST_STREAM. Returns the limit now broken, if any.
   */
  onOutboundFrames(frames: number, controlFrames: number, dataFrames: number): Flood | null {
    this.outboundFrames += frames;
    this.outboundControlFrames += controlFrames;
    this.outboundDataFrames += dataFrames;
    if (this.outboundFrames > this.limits.maxOutboundFrames) return 'outbound_flood';
    if (this.outboundControlFrames > this.limits.maxOutboundControlFrames) return 'outbound_control_flood';
    return null;
  }

  /** Frames the socket wrote out. */
  releaseOutboundFrames(frames: number, controlFrames: number): void {
    this.outboundFrames -= frames;
    this.outboundControlFrames -= controlFrames;
  }
}

/** Whether an outbound frame counts against max_outbound_control_frames, as Envoy's onBeforeFrameSend decides. */
export function isControlFrame(type: number, flags: number): boolean {
  return ((type === FrameType.PING || type === FrameType.SETTINGS) && (flags & FrameFlag.ACK) !== 0) || type === FrameType.RST_STREAM;
}
