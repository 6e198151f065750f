// proxy.filters.http.buffer (Envoy 1.16's BufferFilter): a request with a body goes on only once
// it is whole, so that the upstream gets it at once. The stream may then hold max_request_bytes of
// body; more is answered 413 by the connection manager (downstream_rq_too_large). A request
// without Content-Length is given one, the body's length, unless the runtime key
// envoy.reloadable_features.buffer_filter_populate_content_length says false. A route's most
// specific BufferPerRoute replaces the filter's settings: `disabled`, or a limit of its own.

import type { BufferConfig } from '../../config/model';
import { BUFFER } from '../../config/names';
import type { RequestHead } from '../../http/message';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { HttpFilterFactoryContext } from './http_filter_registry';
import { FilterDataStatus, FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory } from './http_filter';
import { mostSpecificPerFilterConfig } from './per_filter_config';

const POPULATE_CONTENT_LENGTH = 'envoy.reloadable_features.buffer_filter_populate_content_length';

export class BufferFilterFactory implements HttpFilterFactory {
  private readonly runtime: RuntimeSource;

  constructor(
    readonly config: BufferConfig,
    context: HttpFilterFactoryContext,
  ) {
    this.runtime = context.runtime;
  }

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
    const settings = mostSpecificPerFilterConfig(this.callbacks.route(), BUFFER) ?? this.factory.config;
    if (settings.disabled) return FilterHeadersStatus.Continue;
    this.callbacks.setDecoderBufferLimit(settings.maxRequestBytes);
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
