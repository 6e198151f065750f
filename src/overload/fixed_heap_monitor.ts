// proxy.resource_monitors.fixed_heap: the memory this worker's JavaScript holds against
// max_heap_size_bytes. Envoy measures its allocator's heap, request and response buffers
// included; a Buffer's bytes live outside V8's heap, so both are counted: V8's used heap and
// Node's ArrayBuffer memory (which drops as soon as a collection frees the Buffers, where V8's
// external_memory lags a collection behind).

import type { ResourceMonitor } from './resource_monitor';

export class FixedHeapMonitor implements ResourceMonitor {
  constructor(private readonly maxHeapSizeBytes: number) {}

  read(): Promise<number> {
    const memory = process.memoryUsage();
    return Promise.resolve((memory.heapUsed + memory.arrayBuffers) / this.maxHeapSizeBytes);
  }
}
