// proxy.resource_monitors.injected_resource (Envoy's envoy.resource_monitors.injected_resource):
// the pressure written in a file (src/overload/injected_resource_monitor.ts).

import type { ExtensionDescriptor } from '../../config/extension';
import { stringField } from '../../config/json';
import { CONFIG_TYPES, INJECTED_RESOURCE_MONITOR } from '../../config/names';
import { leaf } from '../../config/shape';
import { monitorConfig } from '../../overload/resource_monitor';
import type { DataPlaneFactories } from '../data_plane_factories';

export const INJECTED_RESOURCE: ExtensionDescriptor<'proxy.resource_monitors', DataPlaneFactories['proxy.resource_monitors']> = {
  category: 'proxy.resource_monitors',
  name: INJECTED_RESOURCE_MONITOR,
  configType: CONFIG_TYPES.injectedResource,
  shape: { fields: { filename: leaf } },
  // The protos require a filename.
  model: (config) => ({ kind: 'injected_resource', name: INJECTED_RESOURCE_MONITOR, filename: stringField(config, 'filename') }),
  factory: (config) => {
    const { InjectedResourceMonitor } = require('../../overload/injected_resource_monitor') as typeof import('../../overload/injected_resource_monitor');
    return new InjectedResourceMonitor(monitorConfig(config, 'injected_resource').filename);
  },
};
