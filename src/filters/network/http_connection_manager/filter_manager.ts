// A stream's HTTP filters before the router (Envoy's FilterManager): the request goes through
// their decoder callbacks to the router, the response through their encoder callbacks, last
// filter first, to the codec. Each filter gets callbacks of its own, so that what it continues
// or injects is known to be its. Only the filters that saw the request's head see its response.

import type { HttpProtocol } from '../../../http/codec';
import type { RequestHead, ResponseHead } from '../../../http/message';
import type { TrustedClient } from '../../../http/trusted_client';
import type { StreamInfo } from '../../../stream_info/stream_info';
import {
  type DownstreamFacts,
  FilterDataStatus,
  type HttpFilter,
  type HttpFilterCallbacks,
  type HttpFilterFactory,
  type RouteEntry,
} from '../../http/http_filter';
import type { DownstreamStream, HeaderModifier } from '../../http/router';
import { FilterIteration, FrameKind, type IterationTarget } from './filter_iteration';

type Verdict = ReturnType<IterationTarget<unknown>['call']>;

/** What the filter manager needs of its stream: the chain's two ends and what filters may ask of it. */
export interface FilteredStream extends DownstreamFacts {
  readonly info: StreamInfo | null;
  readonly protocol: HttpProtocol;
  route(): RouteEntry | null;
  trustedClient(): TrustedClient;
  clearRouteCache(): void;
  /** As the router asks for it (DownstreamStream's). */
  sendLocalReply: DownstreamStream['sendLocalReply'];
  /** The request past the last filter, to the router. */
  forwardHeaders(head: RequestHead, endStream: boolean): void;
  forwardData(chunk: Buffer): void;
  forwardEnd(trailers: string[] | null): void;
  /** The response past the first filter, to the codec. */
  writeHeaders(head: ResponseHead, endStream: boolean): void;
  writeData(chunk: Buffer): void;
  writeEnd(trailers: string[] | null): void;
  /** A filter let the request go on outside a read from the client: the router's writes go out now. */
  onDecodingResumed(): void;
  /** A filter let the response go on outside a read from upstream: the codec's writes go out now. */
  onEncodingResumed(): void;
  /** A filter holds too much of the response (true), or drained what it held (false). */
  onEncoderFilterWatermark(above: boolean): void;
  /** The filters hold more of the request (`decoding`) or of the response than the stream may buffer. */
  onBufferOverflow(decoding: boolean): void;
}

export class FilterManager {
  readonly filters: readonly HttpFilter[];
  private readonly handles: readonly FilterHandle[];
  private readonly decoding: FilterIteration<RequestHead>;
  private readonly encoding: FilterIteration<ResponseHead>;
  /** Changes when a stream begins or ends: iterations and callbacks of a stream gone do nothing. */
  generation = 0;
  /** The last filter that saw the current request's head; -1 before any. */
  private decodedThrough = -1;
  /** The response entered the chain. */
  encodingStarted = false;
  /** A filter may make a request gRPC: whether one is must be read before the filters run. */
  readonly makesGrpcRequests: boolean;

  /** @param bufferLimit the listener's per_connection_buffer_limit_bytes: how much body the filters may hold each way */
  constructor(
    factories: readonly HttpFilterFactory[],
    private readonly stream: FilteredStream,
    bufferLimit: number,
  ) {
    this.handles = factories.map((_, i) => new FilterHandle(this, stream, i));
    this.filters = factories.map((factory, i) => factory.createFilter(this.handles[i]));
    this.makesGrpcRequests = factories.some((factory) => factory.makesGrpcRequests === true);
    const count = factories.length;
    this.decoding = new FilterIteration<RequestHead>(count, new DecodingTarget(this, stream), bufferLimit);
    this.encoding = new FilterIteration<ResponseHead>(count, new EncodingTarget(this, stream), bufferLimit);
  }

  /** The stream ended or a new one begins: what the filters held is dropped, and those that saw the request are told. */
  reset(): void {
    this.generation++;
    const through = this.decodedThrough;
    this.decodedThrough = -1;
    this.encodingStarted = false;
    this.decoding.reset();
    this.encoding.reset();
    for (let i = 0; i <= through; i++) this.filters[i].onStreamEnd?.();
  }

  /** Whether any filter saw the current request: its response, local replies included, goes through them. */
  get active(): boolean {
    return this.decodedThrough >= 0;
  }

  /** Envoy's sendLocalReply while the response is being encoded writes it past the filters. */
  get encodesLocalReplies(): boolean {
    return this.decodedThrough >= 0 && !this.encodingStarted;
  }

  decodeHeaders(head: RequestHead, endStream: boolean): void {
    this.decoding.send(0, FrameKind.Head, head, endStream);
  }

  decodeData(chunk: Buffer): void {
    this.decoding.send(0, FrameKind.Data, chunk, false);
  }

  decodeEnd(trailers: string[] | null): void {
    this.decoding.send(0, FrameKind.End, trailers, true);
  }

  encodeHeaders(head: ResponseHead, endStream: boolean): void {
    this.encodingStarted = true;
    this.encoding.send(this.encodeFrom(), FrameKind.Head, head, endStream);
  }

  encodeData(chunk: Buffer): void {
    this.encoding.send(this.encodeFrom(), FrameKind.Data, chunk, false);
  }

  encodeEnd(trailers: string[] | null): void {
    this.encoding.send(this.encodeFrom(), FrameKind.End, trailers, true);
  }

  /** Encoding runs the filters last first: position 0 is the last filter that saw the request. */
  private encodeFrom(): number {
    return this.filters.length - 1 - this.decodedThrough;
  }

  // ---- for the filters' handles ----

  /** The filter at `index` gets the request's head: its callbacks serve this stream from now on. */
  noteDecoded(index: number): void {
    if (index > this.decodedThrough) this.decodedThrough = index;
    this.handles[index].generation = this.generation;
  }

  continueDecoding(index: number, generation: number): void {
    if (generation !== this.generation) return;
    if (this.decoding.resume(index) && generation === this.generation) this.stream.onDecodingResumed();
  }

  continueEncoding(index: number, generation: number): void {
    if (generation !== this.generation) return;
    if (this.encoding.resume(this.filters.length - 1 - index) && generation === this.generation) this.stream.onEncodingResumed();
  }

  decodingBuffer(index: number): Buffer {
    return this.decoding.buffered(index);
  }

  encodingBuffer(index: number): Buffer {
    return this.encoding.buffered(this.filters.length - 1 - index);
  }

  injectDecodedData(index: number, generation: number, chunk: Buffer): void {
    if (generation === this.generation) this.decoding.inject(index, chunk);
  }

  injectEncodedData(index: number, generation: number, chunk: Buffer): void {
    if (generation === this.generation) this.encoding.inject(this.filters.length - 1 - index, chunk);
  }

  setDecoderBufferLimit(bytes: number): void {
    this.decoding.limit = bytes;
  }
}

/** The request's direction: filters in order, then the router. */
class DecodingTarget implements IterationTarget<RequestHead> {
  constructor(
    private readonly manager: FilterManager,
    private readonly stream: FilteredStream,
  ) {}

  get generation(): number {
    return this.manager.generation;
  }

  call(position: number, kind: FrameKind, value: RequestHead | Buffer | string[] | null, endStream: boolean): Verdict {
    const filter = this.manager.filters[position];
    switch (kind) {
      case FrameKind.Head:
        this.manager.noteDecoded(position);
        return filter.decodeHeaders(value as RequestHead, endStream);
      case FrameKind.Data:
        return filter.decodeData === undefined ? FilterDataStatus.Continue : filter.decodeData(value as Buffer);
      default:
        return filter.decodeComplete === undefined ? FilterDataStatus.Continue : filter.decodeComplete(value as string[] | null);
    }
  }

  deliver(kind: FrameKind, value: RequestHead | Buffer | string[] | null, endStream: boolean): void {
    if (kind === FrameKind.Head) this.stream.forwardHeaders(value as RequestHead, endStream);
    else if (kind === FrameKind.Data) this.stream.forwardData(value as Buffer);
    else this.stream.forwardEnd(value as string[] | null);
  }

  onOverflow(): void {
    this.stream.onBufferOverflow(true);
  }
}

/** The response's direction: filters last first, then the codec. */
class EncodingTarget implements IterationTarget<ResponseHead> {
  constructor(
    private readonly manager: FilterManager,
    private readonly stream: FilteredStream,
  ) {}

  get generation(): number {
    return this.manager.generation;
  }

  call(position: number, kind: FrameKind, value: ResponseHead | Buffer | string[] | null, endStream: boolean): Verdict {
    const filters = this.manager.filters;
    const filter = filters[filters.length - 1 - position];
    switch (kind) {
      case FrameKind.Head:
        return filter.encodeHeaders === undefined ? FilterDataStatus.Continue : filter.encodeHeaders(value as ResponseHead, endStream);
      case FrameKind.Data:
        return filter.encodeData === undefined ? FilterDataStatus.Continue : filter.encodeData(value as Buffer);
      default:
        return filter.encodeComplete === undefined ? FilterDataStatus.Continue : filter.encodeComplete(value as string[] | null);
    }
  }

  deliver(kind: FrameKind, value: ResponseHead | Buffer | string[] | null, endStream: boolean): void {
    if (kind === FrameKind.Head) this.stream.writeHeaders(value as ResponseHead, endStream);
    else if (kind === FrameKind.Data) this.stream.writeData(value as Buffer);
    else this.stream.writeEnd(value as string[] | null);
  }

  onOverflow(): void {
    this.stream.onBufferOverflow(false);
  }
}

/**
 * One filter's callbacks. What it continues or injects applies to the stream it was called for:
 * a timer or a service's answer that comes after that stream ended changes nothing.
 */
class FilterHandle implements HttpFilterCallbacks {
  /** The stream this filter last saw the head of. */
  generation = -1;

  constructor(
    private readonly manager: FilterManager,
    private readonly stream: FilteredStream,
    private readonly index: number,
  ) {}

  get info(): StreamInfo | null {
    return this.stream.info;
  }

  get downstream(): DownstreamFacts {
    return this.stream;
  }

  route(): RouteEntry | null {
    return this.stream.route();
  }

  trustedClient(): TrustedClient {
    return this.stream.trustedClient();
  }

  clearRouteCache(): void {
    if (this.generation === this.manager.generation) this.stream.clearRouteCache();
  }

  sendLocalReply(status: number, body: string | Buffer, extraHeaders?: readonly string[], details?: string, grpcStatus?: number, modifyHeaders?: HeaderModifier): void {
    if (this.generation === this.manager.generation) this.stream.sendLocalReply(status, body, extraHeaders, details, modifyHeaders ?? null, grpcStatus);
  }

  continueDecoding(): void {
    this.manager.continueDecoding(this.index, this.generation);
  }

  continueEncoding(): void {
    this.manager.continueEncoding(this.index, this.generation);
  }

  decodingBuffer(): Buffer {
    return this.manager.decodingBuffer(this.index);
  }

  encodingBuffer(): Buffer {
    return this.manager.encodingBuffer(this.index);
  }

  injectDecodedData(chunk: Buffer): void {
    this.manager.injectDecodedData(this.index, this.generation, chunk);
  }

  injectEncodedData(chunk: Buffer): void {
    this.manager.injectEncodedData(this.index, this.generation, chunk);
  }

  onEncoderFilterAboveWriteBufferHighWatermark(): void {
    if (this.generation === this.manager.generation) this.stream.onEncoderFilterWatermark(true);
  }

  onEncoderFilterBelowWriteBufferLowWatermark(): void {
    if (this.generation === this.manager.generation) this.stream.onEncoderFilterWatermark(false);
  }

  setDecoderBufferLimit(bytes: number): void {
    this.manager.setDecoderBufferLimit(bytes);
  }
}
