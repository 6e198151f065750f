// proxy.filters.listener.tls_inspector (src/listener/tls_inspector.ts): finds the SNI, ALPN and
// transport protocol filter_chain_match compares. TlsInspector has no fields.

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES, TLS_INSPECTOR } from '../../config/names';
import type { DataPlaneFactories } from '../data_plane_factories';

export const TLS_INSPECTOR_FILTER: ExtensionDescriptor<'proxy.filters.listener', DataPlaneFactories['proxy.filters.listener']> = {
  category: 'proxy.filters.listener',
  name: TLS_INSPECTOR,
  aliases: ['envoy.listener.tls_inspector'],
  configType: CONFIG_TYPES.tlsInspector,
  shape: { fields: {} },
  model: () => ({ kind: 'tls_inspector', name: TLS_INSPECTOR, injected: false }),
  factory: null,
};
