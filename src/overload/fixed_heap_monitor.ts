// proxy.resource_monitors.fixed_heap: the memory this worker's JavaScript holds against
// max_heap_size_bytes. Envoy measures its allocator's heap, request and response buffers
// included; a Buffer's bytes live outside V8's heap (external memory), so both are counted.

import * as v8 from 'node:v8';
import type { ResourceMonitor } from './resource_monitor';

export class FixedHeapMonitor implements ResourceMonitor {
  constructor(private readonly maxHeapSizeBytes: number) {}

  read(): Promise<number> {
    const heap = v8.getHeapStatistics();
    return Promise.resolve((heap.used_heap_size + heap.external_memory) / this.maxHeapSizeBytes);
  }
}
