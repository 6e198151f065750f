// One direction of a stream's HTTP filter chain (the request through the decoder callbacks in
// order, or the response through the encoder callbacks in reverse): the frames of a message, its
// head, body chunks and end, go from filter to filter to the end of the chain (the router, or
// the codec). A filter that stops a frame holds what it lets out from then on, in order, until it
// continues (Envoy's ActiveStreamFilterBase iteration states and buffered data, one queue per
// filter so that two filters holding at once keep the order between them).

import { FilterDataStatus, FilterHeadersStatus } from '../../http/http_filter';

export const enum FrameKind {
  Head,
  Data,
  End,
}

/** What a filter's callback said of a frame: Continue, keep the frame (Stop...AndBuffer / a stopped head or end), or drop it (NoBuffer). */
type Verdict = FilterDataStatus | FilterHeadersStatus;
const KEEP = FilterDataStatus.StopIterationAndBuffer as Verdict;

/** A frame held after a filter: a head (and whether the message ends with it), a body chunk, or the end (its trailers). */
interface Frame<H> {
  readonly kind: FrameKind;
  /** The head, the chunk, or the trailers (null when none). */
  value: H | Buffer | string[] | null;
  readonly endStream: boolean;
}

/** The chain's ends and its stream, as one direction sees them. */
export interface IterationTarget<H> {
  /** Changes whenever a stream ends or begins: an iteration that outlives its stream stops. */
  readonly generation: number;
  /** Calls filter at `position` (0 is the first of this direction) with a frame; its answer. */
  call(position: number, kind: FrameKind, value: H | Buffer | string[] | null, endStream: boolean): Verdict;
  /** A frame past the last filter. */
  deliver(kind: FrameKind, value: H | Buffer | string[] | null, endStream: boolean): void;
  /** The filters hold more body than the stream may buffer. */
  onOverflow(): void;
}

export class FilterIteration<H> {
  /** Per position: the filter stopped and has not continued. */
  private readonly held: boolean[];
  /** Per position: what the filter let out while it holds, in order; null when nothing. */
  private readonly queues: (Frame<H>[] | null)[];
  /** The position whose callback is running; -1 between callbacks. */
  private calling = -1;
  /** The running callback asked to continue before it returned. */
  private continueAsked = false;
  /** Body bytes held across the direction's queues. */
  private heldBytes = 0;
  /** How many body bytes the filters may hold. */
  limit: number;
  /** A filter stopped or queued since the last reset: only then is there anything to clear. */
  private touched = false;

  constructor(
    private readonly count: number,
    private readonly target: IterationTarget<H>,
    private readonly defaultLimit: number,
  ) {
    this.held = new Array<boolean>(count).fill(false);
    this.queues = new Array<Frame<H>[] | null>(count).fill(null);
    this.limit = defaultLimit;
  }

  /** A new message: nothing held. */
  reset(): void {
    // Most messages pass every filter without a stop: nothing to clear, once per stream and direction.
    if (this.touched) {
      this.held.fill(false);
      this.queues.fill(null);
      this.touched = false;
    }
    this.calling = -1;
    this.heldBytes = 0;
    this.limit = this.defaultLimit;
  }

  /** A frame enters the chain at `from` (0, or past filters that never saw this stream). */
  send(from: number, kind: FrameKind, value: H | Buffer | string[] | null, endStream: boolean): void {
    this.pass(from, kind, value, endStream);
  }

  /**
   * The filter at `position` continues: what it held goes on. Safe to call when it holds nothing.
   * True when frames went on now, false when nothing was held or the filter asked from its own
   * callback (its answer then counts as Continue).
   */
  resume(position: number): boolean {
    if (this.calling === position) {
      this.continueAsked = true;
      return false;
    }
    if (!this.held[position]) return false;
    this.release(position);
    return true;
  }

  /** `chunk` leaves the filter at `position` as body: behind what it holds of the body, before the end it holds. */
  inject(position: number, chunk: Buffer): void {
    const queue = this.queues[position];
    if (queue === null || queue.length === 0) {
      this.pass(position + 1, FrameKind.Data, chunk, false);
      return;
    }
    const last = queue.length - 1;
    if (queue[last].kind !== FrameKind.End) {
      this.enqueue(position, FrameKind.Data, chunk, false);
      return;
    }
    const end = queue.pop()!;
    this.enqueue(position, FrameKind.Data, chunk, false);
    queue.push(end);
  }

  /** The body the filter at `position` holds, as one buffer (kept coalesced). */
  buffered(position: number): Buffer {
    const queue = this.queues[position];
    if (queue === null) return Buffer.alloc(0);
    let first = -1;
    const chunks: Buffer[] = [];
    for (let i = 0; i < queue.length; i++) {
      if (queue[i].kind !== FrameKind.Data) continue;
      if (first < 0) first = i;
      chunks.push(queue[i].value as Buffer);
    }
    if (chunks.length === 0) return Buffer.alloc(0);
    if (chunks.length === 1) return chunks[0];
    const body = Buffer.concat(chunks);
    // Data frames are contiguous after the head: one frame replaces them.
    queue.splice(first, chunks.length, { kind: FrameKind.Data, value: body, endStream: false });
    return body;
  }

  private pass(from: number, kind: FrameKind, value: H | Buffer | string[] | null, endStream: boolean): void {
    const target = this.target;
    const generation = target.generation;
    for (let position = from; position < this.count; position++) {
      this.calling = position;
      this.continueAsked = false;
      const verdict = target.call(position, kind, value, endStream);
      this.calling = -1;
      if (target.generation !== generation) return;
      if (verdict === FilterDataStatus.Continue || this.continueAsked) {
        if (this.held[position]) {
          this.release(position);
          if (target.generation !== generation) return;
        }
        continue;
      }
      this.held[position] = true;
      this.touched = true;
      if (verdict === KEEP) this.enqueue(position, kind, value, endStream);
      return;
    }
    target.deliver(kind, value, endStream);
  }

  private enqueue(position: number, kind: FrameKind, value: H | Buffer | string[] | null, endStream: boolean): void {
    let queue = this.queues[position];
    if (queue === null) {
      this.queues[position] = queue = [];
      this.touched = true;
    }
    queue.push({ kind, value, endStream });
    if (kind !== FrameKind.Data) return;
    this.heldBytes += (value as Buffer).length;
    if (this.heldBytes > this.limit) this.target.onOverflow();
  }

  /** The filter at `position` no longer holds: its frames go to the next, in order, while the stream lasts. */
  private release(position: number): void {
    this.held[position] = false;
    const queue = this.queues[position];
    if (queue === null) return;
    this.queues[position] = null;
    const generation = this.target.generation;
    for (const frame of queue) {
      if (frame.kind === FrameKind.Data) this.heldBytes -= (frame.value as Buffer).length;
      this.pass(position + 1, frame.kind, frame.value, frame.endStream);
      if (this.target.generation !== generation) return;
    }
  }
}
