// proxy.filters.http.gzip, the gzip filter Envoy 1.16 deprecates for the compressor filter and
// runs on the same code (src/filters/http/compressor.ts): its zlib settings are its own fields,
// the others those of its `compressor` (a Compressor, whose compressor_library it ignores), and
// its counters are `http.<stat_prefix>.gzip.*`.

import type { ExtensionDescriptor } from '../../config/extension';
import { enumField, messageField } from '../../config/json';
import { CONFIG_TYPES, GZIP } from '../../config/names';
import { leaf } from '../../config/shape';
import type { DataPlaneFactories } from '../data_plane_factories';
import { compressorConfig, GZIP_FILTER_COMPRESSOR, zlibSizes } from './compressor';

/** Gzip.CompressionLevel.Enum as zlib's levels (DEFAULT: Z_DEFAULT_COMPRESSION). */
const LEVELS: Readonly<Record<string, number>> = { DEFAULT: -1, BEST: 9, SPEED: 1 };
const STRATEGIES: Readonly<Record<string, number>> = { DEFAULT: 0, FILTERED: 1, HUFFMAN: 2, RLE: 3 };

export const GZIP_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: GZIP,
  aliases: ['envoy.gzip'],
  configType: CONFIG_TYPES.gzip,
  shape: {
    fields: { memory_level: leaf, compression_level: leaf, compression_strategy: leaf, window_bits: leaf, chunk_size: leaf, compressor: GZIP_FILTER_COMPRESSOR },
  },
  model: (config) => ({
    name: GZIP,
    compressor: compressorConfig(messageField(config, 'compressor') ?? {}, 'gzip', {
      level: LEVELS[enumField(config, 'compression_level', 'DEFAULT')] ?? -1,
      strategy: STRATEGIES[enumField(config, 'compression_strategy', 'DEFAULT')] ?? 0,
      ...zlibSizes(config),
    }),
  }),
  factory: (config, context) => {
    if (config.compressor === undefined) return null;
    const { CompressorFilterFactory } = require('../../filters/http/compressor') as typeof import('../../filters/http/compressor');
    return new CompressorFilterFactory(config.compressor, context.scope, context.runtime);
  },
};
