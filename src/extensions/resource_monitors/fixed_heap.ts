// proxy.resource_monitors.fixed_heap (Envoy's envoy.resource_monitors.fixed_heap): each worker's
// heap against max_heap_size_bytes (src/overload/fixed_heap_monitor.ts).

import type { ExtensionDescriptor } from '../../config/extension';
import { numberField } from '../../config/json';
import { CONFIG_TYPES, FIXED_HEAP_MONITOR } from '../../config/names';
import { leaf } from '../../config/shape';
import { monitorConfig } from '../../overload/resource_monitor';
import type { DataPlaneFactories } from '../data_plane_factories';

export const FIXED_HEAP: ExtensionDescriptor<'proxy.resource_monitors', DataPlaneFactories['proxy.resource_monitors']> = {
  category: 'proxy.resource_monitors',
  name: FIXED_HEAP_MONITOR,
  configType: CONFIG_TYPES.fixedHeap,
  shape: { fields: { max_heap_size_bytes: leaf } },
  // The protos require max_heap_size_bytes > 0.
  model: (config) => ({ kind: 'fixed_heap', name: FIXED_HEAP_MONITOR, maxHeapSizeBytes: numberField(config, 'max_heap_size_bytes') }),
  factory: (config) => {
    const { FixedHeapMonitor } = require('../../overload/fixed_heap_monitor') as typeof import('../../overload/fixed_heap_monitor');
    return new FixedHeapMonitor(monitorConfig(config, 'fixed_heap').maxHeapSizeBytes);
  },
};
