// proxy.filters.http.compressor (src/filters/http/compressor.ts): Envoy 1.16's Compressor, whose
// compressor_library must be envoy.compression.gzip.compressor (the one library Envoy 1.16 has),
// and the settings the deprecated gzip filter shares (gzip.ts). Fields later Envoys added (the
// direction configs, choose_first) are refused by path.

import type { ExtensionDescriptor } from '../../config/extension';
import { FieldError } from '../../config/errors';
import { childPath } from '../../config/field_path';
import { boolField, enumField, type JsonObject, messageField, numberField, stringField, stringList } from '../../config/json';
import type { CompressorConfig, GzipCompressionConfig, RuntimeFeatureFlag } from '../../config/model';
import { COMPRESSOR, CONFIG_TYPES, typeNameOfUrl } from '../../config/names';
import { anyContent, leaf, refused, type Shape } from '../../config/shape';
import type { DataPlaneFactories } from '../data_plane_factories';

/** Envoy 1.16's media types compressed when content_type is empty. */
const DEFAULT_CONTENT_TYPES = [
  'text/html',
  'text/plain',
  'text/css',
  'application/javascript',
  'application/x-javascript',
  'text/javascript',
  'text/x-javascript',
  'text/ecmascript',
  'text/js',
  'text/jscript',
  'text/x-js',
  'application/ecmascript',
  'application/x-json',
  'application/xml',
  'application/json',
  'image/svg+xml',
  'text/xml',
  'application/xhtml+xml',
];
const DEFAULT_MIN_CONTENT_LENGTH = 30;
const DEFAULT_MEMORY_LEVEL = 5;
const DEFAULT_WINDOW_BITS = 12;
const DEFAULT_CHUNK_SIZE = 4096;
/** zlib's Z_DEFAULT_COMPRESSION. */
const ZLIB_DEFAULT_LEVEL = -1;

const NOT_IN_1_16 = refused("is not a field of Envoy 1.16's Compressor");

/** Compressor's fields both filters honour; the gzip filter's `compressor` has them too. */
export const COMPRESSOR_SETTINGS = {
  content_length: leaf,
  content_type: leaf,
  disable_on_etag_header: leaf,
  remove_accept_encoding_header: leaf,
  runtime_enabled: leaf,
  request_direction_config: NOT_IN_1_16,
  response_direction_config: NOT_IN_1_16,
  choose_first: NOT_IN_1_16,
} as const;

/** compression.gzip.compressor.v3.Gzip's levels, aliases included, as zlib's. */
const LIBRARY_LEVELS: Readonly<Record<string, number>> = {
  DEFAULT_COMPRESSION: ZLIB_DEFAULT_LEVEL,
  BEST_SPEED: 1,
  BEST_COMPRESSION: 9,
  ...Object.fromEntries([1, 2, 3, 4, 5, 6, 7, 8, 9].map((level) => [`COMPRESSION_LEVEL_${level}`, level])),
};
const LIBRARY_STRATEGIES: Readonly<Record<string, number>> = { DEFAULT_STRATEGY: 0, FILTERED: 1, HUFFMAN_ONLY: 2, RLE: 3, FIXED: 4 };

export const COMPRESSOR_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: COMPRESSOR,
  configType: CONFIG_TYPES.compressor,
  shape: { fields: { ...COMPRESSOR_SETTINGS, compressor_library: { fields: { name: leaf, typed_config: anyContent } } } },
  validate: validateCompressor,
  model: (config) => {
    const library = messageField(config, 'compressor_library')!;
    const gzip = messageField(library, 'typed_config')!;
    return {
      name: COMPRESSOR,
      compressor: compressorConfig(config, `compressor.${stringField(library, 'name')}.gzip`, {
        level: LIBRARY_LEVELS[enumField(gzip, 'compression_level', 'DEFAULT_COMPRESSION')] ?? ZLIB_DEFAULT_LEVEL,
        strategy: LIBRARY_STRATEGIES[enumField(gzip, 'compression_strategy', 'DEFAULT_STRATEGY')] ?? 0,
        ...zlibSizes(gzip),
      }),
    };
  },
  factory: (config, context) => {
    if (config.compressor === undefined) return null;
    const { CompressorFilterFactory } = require('../../filters/http/compressor') as typeof import('../../filters/http/compressor');
    return new CompressorFilterFactory(config.compressor, context.scope, context.runtime);
  },
};

/** The library is required, and Envoy 1.16 registers gzip alone (brotli came later). */
function validateCompressor(config: JsonObject, path: string): void {
  const libraryPath = childPath(path, 'compressor_library');
  const library = messageField(config, 'compressor_library');
  if (library === undefined) throw new FieldError(libraryPath, "Didn't find a registered implementation for type: ''");
  const type = typeNameOfUrl(stringField(messageField(library, 'typed_config') ?? {}, '@type'));
  if (type !== CONFIG_TYPES.gzipCompressorLibrary) {
    throw new FieldError(childPath(childPath(libraryPath, 'typed_config'), '@type'), `Didn't find a registered implementation for type: '${type}'`);
  }
}

/**
 * Compressor's settings (or the gzip filter's `compressor`, `{}` when unset) with Envoy's
 * defaults, for the counters at `statPrefix` and the zlib parameters `gzip`.
 */
export function compressorConfig(settings: JsonObject, statPrefix: string, gzip: GzipCompressionConfig): CompressorConfig {
  const contentTypes = stringList(settings, 'content_type').map((type) => type.trim().toLowerCase());
  const flag = messageField(settings, 'runtime_enabled');
  const runtimeEnabled: RuntimeFeatureFlag | undefined =
    flag === undefined ? undefined : { runtimeKey: stringField(flag, 'runtime_key'), defaultValue: boolField(flag, 'default_value', true) };
  return {
    statPrefix,
    minContentLength: numberField(settings, 'content_length') || DEFAULT_MIN_CONTENT_LENGTH,
    contentTypes: contentTypes.length === 0 ? DEFAULT_CONTENT_TYPES : contentTypes,
    disableOnEtagHeader: boolField(settings, 'disable_on_etag_header'),
    removeAcceptEncodingHeader: boolField(settings, 'remove_accept_encoding_header'),
    ...(runtimeEnabled === undefined ? {} : { runtimeEnabled }),
    gzip,
  };
}

/** memory_level, window_bits and chunk_size, which both gzip messages spell alike, with Envoy's defaults. */
export function zlibSizes(config: JsonObject): Pick<GzipCompressionConfig, 'memoryLevel' | 'windowBits' | 'chunkSize'> {
  return {
    memoryLevel: numberField(config, 'memory_level') || DEFAULT_MEMORY_LEVEL,
    windowBits: numberField(config, 'window_bits') || DEFAULT_WINDOW_BITS,
    chunkSize: numberField(config, 'chunk_size') || DEFAULT_CHUNK_SIZE,
  };
}

/** The Shape of a compressor's settings, for the gzip filter's `compressor`. */
export const GZIP_FILTER_COMPRESSOR: Shape = {
  fields: { ...COMPRESSOR_SETTINGS, compressor_library: refused('is ignored by the gzip filter, as in Envoy 1.16: use proxy.filters.http.compressor') },
};
