// proxy.filters.http.buffer (src/filters/http/buffer.ts): Buffer's max_request_bytes, which
// Envoy requires, and a route's BufferPerRoute (typed_per_filter_config): `disabled`, or a
// Buffer of its own.

import type { ExtensionDescriptor } from '../../config/extension';
import { FieldError } from '../../config/errors';
import { childPath } from '../../config/field_path';
import { boolField, type JsonObject, messageField, numberField } from '../../config/json';
import type { BufferConfig } from '../../config/model';
import { BUFFER, CONFIG_TYPES } from '../../config/names';
import { leaf, type Shape } from '../../config/shape';
import type { DataPlaneFactories } from '../data_plane_factories';

const BUFFER_SHAPE: Shape = { fields: { max_request_bytes: leaf } };

export const BUFFER_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: BUFFER,
  aliases: ['envoy.buffer'],
  configType: CONFIG_TYPES.buffer,
  shape: BUFFER_SHAPE,
  validate: validateBuffer,
  model: (config) => ({ name: BUFFER, buffer: buffer(config) }),
  factory: (config, context) => {
    if (config.buffer === undefined) return null;
    const { BufferFilterFactory } = require('../../filters/http/buffer') as typeof import('../../filters/http/buffer');
    return new BufferFilterFactory(config.buffer, context);
  },
  perRoute: {
    configType: CONFIG_TYPES.bufferPerRoute,
    shape: { fields: { disabled: leaf, buffer: BUFFER_SHAPE } },
    // The protos require one of the two, and max_request_bytes in `buffer`.
    model: (config) => (boolField(config, 'disabled') ? { disabled: true, maxRequestBytes: 0 } : buffer(messageField(config, 'buffer') ?? {})),
  },
};

/** The protos check max_request_bytes when it is set; a typed_config without it (or none) is Envoy's empty Buffer, which fails. */
function validateBuffer(config: JsonObject, path: string): void {
  if (config['max_request_bytes'] === undefined) throw new FieldError(childPath(path, 'max_request_bytes'), 'value is required');
}

function buffer(config: JsonObject): BufferConfig {
  return { disabled: false, maxRequestBytes: numberField(config, 'max_request_bytes') };
}
