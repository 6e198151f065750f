// GET /memory: envoy.admin.v3.Memory (tcmalloc's figures in Envoy) from the V8 figures of the
// supervisor and every worker, summed, since together they are the server:
//   allocated            heapUsed + external: bytes the program holds, JS objects and native
//   heap_size            heapTotal + external: bytes the allocators took from the system
//   pageheap_free        heapTotal - heapUsed: V8 heap reserved but not in use
//   pageheap_unmapped    0: V8 unmaps freed pages at once and keeps no count of them
//   total_thread_cache   0: V8's per-thread allocation buffers are not reported
//   total_physical_bytes rss: resident memory of the processes
// Every field is a uint64, printed as a JSON string.

import { AdminHandler, JSON_TYPE } from './admin_server';

export function renderMemory(usages: readonly NodeJS.MemoryUsage[]): string {
  const sum = (f: (u: NodeJS.MemoryUsage) => number) => String(usages.reduce((n, u) => n + f(u), 0));
  const memory = {
    allocated: sum((u) => u.heapUsed + u.external),
    heap_size: sum((u) => u.heapTotal + u.external),
    pageheap_unmapped: '0',
    pageheap_free: sum((u) => Math.max(0, u.heapTotal - u.heapUsed)),
    total_thread_cache: '0',
    total_physical_bytes: sum((u) => u.rss),
  };
  return `${JSON.stringify(memory, null, 1)}\n`;
}

/** @param usages the memory of every process of the server */
export function memoryHandler(usages: () => Promise<readonly NodeJS.MemoryUsage[]>): AdminHandler {
  return {
    path: '/memory',
    help: 'print current allocation/heap usage',
    mutatesState: false,
    decodeQuery: false,
    handle: async () => ({ status: 200, contentType: JSON_TYPE, body: renderMemory(await usages()) }),
  };
}
