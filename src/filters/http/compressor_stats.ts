// The compressor filter's statistics (Envoy 1.16's ALL_COMPRESSOR_STATS), under
// `http.<stat_prefix>.compressor.<library name>.gzip.` or, for the gzip filter, `http.<stat_prefix>.gzip.`.

import type { Counter, Scope } from '../../stats/stats';

export class CompressorStats {
  readonly compressed: Counter;
  readonly not_compressed: Counter;
  readonly no_accept_header: Counter;
  readonly header_identity: Counter;
  /** Deprecated in Envoy for header_compressor_used, and still counted with it for gzip. */
  readonly header_gzip: Counter;
  readonly header_compressor_used: Counter;
  readonly header_compressor_overshadowed: Counter;
  readonly header_wildcard: Counter;
  readonly header_not_valid: Counter;
  readonly total_uncompressed_bytes: Counter;
  readonly total_compressed_bytes: Counter;
  readonly content_length_too_small: Counter;
  readonly not_compressed_etag: Counter;

  constructor(scope: Scope) {
    this.compressed = scope.counter('compressed');
    this.not_compressed = scope.counter('not_compressed');
    this.no_accept_header = scope.counter('no_accept_header');
    this.header_identity = scope.counter('header_identity');
    this.header_gzip = scope.counter('header_gzip');
    this.header_compressor_used = scope.counter('header_compressor_used');
    this.header_compressor_overshadowed = scope.counter('header_compressor_overshadowed');
    this.header_wildcard = scope.counter('header_wildcard');
    this.header_not_valid = scope.counter('header_not_valid');
    this.total_uncompressed_bytes = scope.counter('total_uncompressed_bytes');
    this.total_compressed_bytes = scope.counter('total_compressed_bytes');
    this.content_length_too_small = scope.counter('content_length_too_small');
    this.not_compressed_etag = scope.counter('not_compressed_etag');
  }
}
