// proxy.transport_sockets.upstream_proxy_protocol: Envoy 1.16's upstream PROXY protocol socket
// (src/network/upstream_proxy_protocol.ts), wrapping another upstream transport socket. The TLV
// pass-through and the options after 1.16 stay refused.

import type { ExtensionDescriptor } from '../../config/extension';
import { FieldError } from '../../config/errors';
import { childPath } from '../../config/field_path';
import { enumField, messageField } from '../../config/json';
import { CONFIG_TYPES, UPSTREAM_PROXY_PROTOCOL_TRANSPORT_SOCKET } from '../../config/names';
import { anyContent, leaf } from '../../config/shape';
import { validateExtension } from '../../config/validation/extensions';
import type { DataPlaneFactories } from '../data_plane_factories';

export const UPSTREAM_PROXY_PROTOCOL: ExtensionDescriptor<'proxy.transport_sockets.upstream', DataPlaneFactories['proxy.transport_sockets.upstream']> = {
  category: 'proxy.transport_sockets.upstream',
  name: UPSTREAM_PROXY_PROTOCOL_TRANSPORT_SOCKET,
  configType: CONFIG_TYPES.upstreamProxyProtocol,
  // The wrapped socket's typed_config is checked by its own @type.
  shape: { fields: { config: { fields: { version: leaf } }, transport_socket: { fields: { name: leaf, typed_config: anyContent } } } },
  validate: (config, path, context) => {
    const wrappedPath = childPath(path, 'transport_socket');
    // The proto requires it when typed_config is there; without one it is missing all the same.
    const wrapped = messageField(config, 'transport_socket');
    if (wrapped === undefined) throw new FieldError(wrappedPath, 'value is required');
    validateExtension('proxy.transport_sockets.upstream', wrapped, wrappedPath, context);
  },
  model: (config, { extensions }) => ({
    kind: 'upstream_proxy_protocol',
    version: enumField<'V1' | 'V2'>(messageField(config, 'config') ?? {}, 'version', 'V1'),
    // Validation made the wrapped transport socket present.
    transportSocket: extensions.model('proxy.transport_sockets.upstream', messageField(config, 'transport_socket')!),
  }),
  factory: null,
};
