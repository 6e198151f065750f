// proxy.transport_sockets.raw_buffer: plaintext, on either side. RawBuffer has no fields.

import type { ExtensionCategory, ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES, RAW_BUFFER_TRANSPORT_SOCKET } from '../../config/names';
import type { DataPlaneFactories } from '../data_plane_factories';

type TransportSocketCategory = Extract<ExtensionCategory, 'proxy.transport_sockets.downstream' | 'proxy.transport_sockets.upstream'>;

function rawBuffer<C extends TransportSocketCategory>(category: C): ExtensionDescriptor<C, DataPlaneFactories[C]> {
  return {
    category,
    name: RAW_BUFFER_TRANSPORT_SOCKET,
    aliases: ['raw_buffer'],
    configType: CONFIG_TYPES.rawBuffer,
    shape: { fields: {} },
    model: () => ({ kind: 'raw_buffer' }),
    factory: null,
  };
}

export const DOWNSTREAM_RAW_BUFFER = rawBuffer('proxy.transport_sockets.downstream');
export const UPSTREAM_RAW_BUFFER = rawBuffer('proxy.transport_sockets.upstream');
