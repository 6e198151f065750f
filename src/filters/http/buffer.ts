// proxy.filters.http.buffer (Envoy 1.16's BufferFilter): a request with a body goes on only once
// it is whole, so that the upstream gets it at once. The stream may then hold max_request_bytes of
// body; more is answered 413 by the connection manager (downstream_rq_too_large). A request
// without Content-Length is given one, the body's length, unless the runtime key
// envoy.reloadable_features.buffer_filter_populate_content_length says false.

import type { BufferConfig } from '../../config/model';
import type { RequestHead } from '../../http/message';
import type { RuntimeSource } from '../../runtime/live_runtime';
import { FilterDataStatus, FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory } from './http_filter';

const POPULATE_CONTENT_LENGTH = 'envoy.reloadable_features.buffer_filter_populate_content_length';

export class BufferFilterFactory implements HttpFilterFactory {
  constructor(
    readonly config: BufferConfig,
    private readonly runtime: RuntimeSource,
  ) {}

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new BufferFilter(this, callbacks);
  }

  populatesContentLength(): boolean {
    return this.runtime.snapshot().getBoolean(POPULATE_CONTENT_LENGTH, true);
  }
}

class BufferFilter implements HttpFilter {
  /** The request being buffered; null when it is not. */
  private head: RequestHead | null = null;
  private length = 0;

  constructor(
    private readonly factory: BufferFilterFactory,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(head: RequestHead, endStream: boolean): FilterHeadersStatus {
    this.length = 0;
    this.head = null;
    // A request without a body has nothing to wait for.
    if (endStream) return FilterHeadersStatus.Continue;
    this.callbacks.setDecoderBufferLimit(this.factory.config.maxRequestBytes);
    this.head = head;
    return FilterHeadersStatus.StopIteration;
  }

  decodeData(chunk: Buffer): FilterDataStatus {
    if (this.head === null) return FilterDataStatus.Continue;
    this.length += chunk.length;
    return FilterDataStatus.StopIterationAndBuffer;
  }

  decodeComplete(): FilterHeadersStatus {
    const head = this.head;
    if (head !== null && head.contentLength < 0 && this.factory.populatesContentLength()) head.contentLength = head.bodyLength = this.length;
    return FilterHeadersStatus.Continue;
  }

  onStreamEnd(): void {
    this.head = null;
  }
}
