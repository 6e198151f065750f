// proxy.filters.http.compressor with the gzip library, and the deprecated proxy.filters.http.gzip
// built on it (Envoy 1.16's common CompressorFilter). A response is gzipped when its request
// accepts gzip (accept_encoding.ts), it has a body of at least content_length bytes (or is
// chunked: Envoy 1.16 compresses nothing else without Content-Length), its media type is one of
// content_type, and neither Cache-Control no-transform, a Content-Encoding, a gzip or deflate
// transfer coding nor (with disable_on_etag_header) an ETag says otherwise. A gzipped response
// loses Content-Length and a strong ETag, gains Content-Encoding and Vary: Accept-Encoding, and
// its body is compressed chunk by chunk, each flushed as it goes (gzip_stream.ts).

import type * as zlib from 'node:zlib';
import type { CompressorConfig } from '../../config/model';
import { listHasToken } from '../../http/list_tokens';
import { appendHeaderValue, BODY_CHUNKED, firstHeaderValue, type RequestHead, removeHeaders, type ResponseHead, setHeader } from '../../http/message';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { Scope } from '../../stats/stats';
import { AcceptEncodingStat, chooseEncoding, type CompressorOffer, mediaTypeOf } from './accept_encoding';
import { CompressorStats } from './compressor_stats';
import { deflateOptions, GzipStream } from './gzip_stream';
import { FilterDataStatus, FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory } from './http_filter';

const GZIP = 'gzip';
const VARY_ACCEPT_ENCODING = 'Accept-Encoding';

export class CompressorFilterFactory implements HttpFilterFactory {
  readonly stats: CompressorStats;
  /** What this filter offers to the encoding choice. */
  readonly offer: CompressorOffer;
  readonly deflate: zlib.ZlibOptions;
  readonly windowSize: number;

  /** @param scope the connection manager's `http.<stat_prefix>` */
  constructor(
    readonly config: CompressorConfig,
    scope: Scope,
    private readonly runtime: RuntimeSource,
  ) {
    this.stats = new CompressorStats(scope.scope(config.statPrefix));
    this.offer = { encoding: GZIP, contentTypes: new Set(config.contentTypes) };
    this.deflate = deflateOptions(config.gzip);
    this.windowSize = 1 << config.gzip.windowBits;
  }

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new CompressorFilter(this, callbacks);
  }

  /** runtime_enabled: the runtime's boolean at its key, else its default; always without one. */
  enabled(): boolean {
    const flag = this.config.runtimeEnabled;
    return flag === undefined || this.runtime.snapshot().getBoolean(flag.runtimeKey, flag.defaultValue);
  }
}

class CompressorFilter implements HttpFilter {
  /** The request's Accept-Encoding, its values joined; undefined without one. */
  private acceptEncoding: string | undefined = undefined;
  /** The current response's compressor; null when it is not compressed. */
  private stream: GzipStream | null = null;

  constructor(
    private readonly factory: CompressorFilterFactory,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(head: RequestHead): FilterHeadersStatus {
    this.stream = null;
    const headers = head.headers;
    let accept: string | undefined;
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i] === 'accept-encoding') accept = accept === undefined ? headers[i + 1] : `${accept},${headers[i + 1]}`;
    }
    this.acceptEncoding = accept;
    const factory = this.factory;
    if (accept !== undefined && factory.config.removeAcceptEncodingHeader && factory.enabled()) removeHeaders(headers, (name) => name === 'accept-encoding');
    return FilterHeadersStatus.Continue;
  }

  encodeHeaders(head: ResponseHead, endStream: boolean): FilterHeadersStatus {
    const factory = this.factory;
    const stats = factory.stats;
    const headers = head.headers;
    // Envoy's order of checks: each counts its own reason, the first that fails ends them.
    if (
      endStream ||
      !factory.enabled() ||
      !this.longEnough(head) ||
      !this.acceptsGzip(headers) ||
      !this.contentTypeAllowed(headers) ||
      noTransform(headers) ||
      !this.etagAllowed(headers) ||
      !transferCodingAllowed(head) ||
      firstHeaderValue(headers, 'content-encoding') !== undefined
    ) {
      stats.not_compressed.inc();
      return FilterHeadersStatus.Continue;
    }
    const etag = firstHeaderValue(headers, 'etag');
    // A strong validator no longer describes the bytes sent; a weak one still may.
    if (etag !== undefined && etag.length > 2 && !/^[wW]\//.test(etag)) removeHeaders(headers, (name) => name === 'etag');
    const vary = firstHeaderValue(headers, 'vary');
    if (vary === undefined || !listHasToken(vary, VARY_ACCEPT_ENCODING, false)) appendHeaderValue(headers, 'vary', VARY_ACCEPT_ENCODING);
    removeHeaders(headers, (name) => name === 'content-length');
    head.contentLength = -1;
    head.bodyLength = BODY_CHUNKED;
    setHeader(headers, 'content-encoding', GZIP);
    stats.compressed.inc();
    this.stream = new GzipStream(factory.deflate, factory.windowSize);
    return FilterHeadersStatus.Continue;
  }

  encodeData(chunk: Buffer): FilterDataStatus {
    const stream = this.stream;
    if (stream === null) return FilterDataStatus.Continue;
    const stats = this.factory.stats;
    stats.total_uncompressed_bytes.add(chunk.length);
    const compressed = stream.compress(chunk);
    stats.total_compressed_bytes.add(compressed.length);
    this.callbacks.injectEncodedData(compressed);
    return FilterDataStatus.StopIterationNoBuffer;
  }

  encodeComplete(): FilterHeadersStatus {
    const stream = this.stream;
    if (stream === null) return FilterHeadersStatus.Continue;
    this.stream = null;
    const last = stream.finish();
    this.factory.stats.total_compressed_bytes.add(last.length);
    this.callbacks.injectEncodedData(last);
    return FilterHeadersStatus.Continue;
  }

  onStreamEnd(): void {
    this.stream = null;
  }

  /** Content-Length at least the minimum; without one, only a chunked body (Envoy 1.16 reads Transfer-Encoding). */
  private longEnough(head: ResponseHead): boolean {
    if (head.contentLength < 0) return head.chunked;
    if (head.contentLength >= this.factory.config.minContentLength) return true;
    this.factory.stats.content_length_too_small.inc();
    return false;
  }

  private acceptsGzip(headers: readonly string[]): boolean {
    const stats = this.factory.stats;
    const accept = this.acceptEncoding;
    if (accept === undefined) {
      stats.no_accept_header.inc();
      return false;
    }
    const choice = chooseEncoding(accept, mediaTypeOf(firstHeaderValue(headers, 'content-type') ?? ''), [this.factory.offer]);
    switch (choice.stat) {
      // This filter is the chain's only offer, so a compressor chosen is gzip, never another's.
      case AcceptEncodingStat.ValidCompressor:
        stats.header_compressor_used.inc();
        stats.header_gzip.inc();
        return true;
      case AcceptEncodingStat.Identity:
        stats.header_identity.inc();
        return false;
      case AcceptEncodingStat.Wildcard:
        stats.header_wildcard.inc();
        return true;
      default:
        stats.header_not_valid.inc();
        return false;
    }
  }

  private contentTypeAllowed(headers: readonly string[]): boolean {
    const contentType = firstHeaderValue(headers, 'content-type');
    return contentType === undefined || this.factory.offer.contentTypes.has(mediaTypeOf(contentType));
  }

  private etagAllowed(headers: readonly string[]): boolean {
    if (!this.factory.config.disableOnEtagHeader || firstHeaderValue(headers, 'etag') === undefined) return true;
    this.factory.stats.not_compressed_etag.inc();
    return false;
  }
}

function noTransform(headers: readonly string[]): boolean {
  const cacheControl = firstHeaderValue(headers, 'cache-control');
  return cacheControl !== undefined && listHasToken(cacheControl, 'no-transform', true);
}

/** A body the upstream gzipped or deflated as a transfer coding is left as it is. */
function transferCodingAllowed(head: ResponseHead): boolean {
  const codings = head.transferCodings;
  return codings === null || !(listHasToken(codings, GZIP, true) || listHasToken(codings, 'deflate', true));
}
