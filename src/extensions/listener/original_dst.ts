// proxy.filters.listener.original_dst: a connection's destination becomes the address it was
// redirected from (src/listener/original_dst.ts). OriginalDst has no fields.

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES, ORIGINAL_DST_LISTENER_FILTER } from '../../config/names';
import type { DataPlaneFactories } from '../data_plane_factories';

export const ORIGINAL_DST_FILTER: ExtensionDescriptor<'proxy.filters.listener', DataPlaneFactories['proxy.filters.listener']> = {
  category: 'proxy.filters.listener',
  name: ORIGINAL_DST_LISTENER_FILTER,
  aliases: ['envoy.listener.original_dst'],
  configType: CONFIG_TYPES.originalDst,
  shape: { fields: {} },
  model: () => ({ kind: 'original_dst', name: ORIGINAL_DST_LISTENER_FILTER, injected: false }),
  factory: null,
};
