// proxy.filters.http.buffer (src/filters/http/buffer.ts): Buffer's max_request_bytes, which
// Envoy requires. BufferPerRoute needs typed_per_filter_config, which routes do not take yet.

import type { ExtensionDescriptor } from '../../config/extension';
import { FieldError } from '../../config/errors';
import { childPath } from '../../config/field_path';
import { type JsonObject, numberField } from '../../config/json';
import { BUFFER, CONFIG_TYPES } from '../../config/names';
import { leaf } from '../../config/shape';
import { BufferFilterFactory } from '../../filters/http/buffer';
import type { DataPlaneFactories } from '../data_plane_factories';

export const BUFFER_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: BUFFER,
  aliases: ['envoy.buffer'],
  configType: CONFIG_TYPES.buffer,
  shape: { fields: { max_request_bytes: leaf } },
  validate: validateBuffer,
  model: (config) => ({ name: BUFFER, buffer: { maxRequestBytes: numberField(config, 'max_request_bytes') } }),
  factory: (config, context) => (config.buffer === undefined ? null : new BufferFilterFactory(config.buffer, context.runtime)),
};

/** The protos check max_request_bytes when it is set; a typed_config without it (or none) is Envoy's empty Buffer, which fails. */
function validateBuffer(config: JsonObject, path: string): void {
  if (config['max_request_bytes'] === undefined) throw new FieldError(childPath(path, 'max_request_bytes'), 'value is required');
}
