import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { contentionHandler, TRACING_DISABLED } from '../../src/admin/contention_handler';
import { MutexTracer } from '../../src/shared_memory/mutex_tracer';
import { NameTable } from '../../src/stats/name_table';
import { StatsRegion } from '../../src/shared_memory/region';
import { CHUNK_BLOCK_BYTES, SectionKind, StatKind, STATS_CHUNK_DIR_OFFSET } from '../../src/shared_memory/region_layout';
import { offsetOf, segmentOf } from '../../src/shared_memory/segments';
import type { SharedMemorySource } from '../../src/shared_memory/shared_memory_source';

async function contention(tracer: MutexTracer | null) {
  const response = await contentionHandler(tracer).handle({ method: 'GET', path: '/contention', query: new Map(), headers: {}, body: Buffer.alloc(0), role: null });
  return response;
}

test('/contention without --enable-mutex-tracing says how to enable it', { timeout: 20000 }, async () => {
  const response = await contention(null);
  assert.equal(response.status, 200);
  assert.equal(response.body, TRACING_DISABLED);
  assert.equal(response.body, 'Mutex contention tracing is not enabled. To enable, run Proxy with flag --enable-mutex-tracing.');
});

test('the tracer counts contentions, keeps the latest wait and sums them all', () => {
  const tracer = new MutexTracer();
  assert.deepEqual(tracer.stats(), { numContentions: 0, currentWaitCycles: 0, lifetimeWaitCycles: 0 });
  tracer.record(40);
  tracer.record(2);
  assert.deepEqual(tracer.stats(), { numContentions: 2, currentWaitCycles: 2, lifetimeWaitCycles: 42 });
});

/** Region objects another thread can see: the same region code over SharedArrayBuffers. */
class SharedBufferMemory implements SharedMemorySource {
  private readonly objects = new Map<string, ArrayBuffer>();
  create(name: string, bytes: number): ArrayBuffer {
    const buffer = new SharedArrayBuffer(bytes) as unknown as ArrayBuffer;
    this.objects.set(name, buffer);
    return buffer;
  }
  open(name: string): ArrayBuffer {
    return this.objects.get(name)!;
  }
  unlink(name: string): void {
    this.objects.delete(name);
  }
}

test('a wait for a stats block another thread is allocating is traced and served as MutexStats', { timeout: 20000 }, async () => {
  const region = StatsRegion.create({ memory: new SharedBufferMemory(), name: '/contention', pid: process.pid, segmentBytes: 1 << 20 }, 0, 0);
  const table = new NameTable(region);
  const { view, base } = region.section(SectionKind.Stats);
  // Another writer has claimed the first chunk and is still allocating it.
  const word = base + STATS_CHUNK_DIR_OFFSET;
  Atomics.store(view, word + 1, -1);
  const block = region.segments.alloc(CHUNK_BLOCK_BYTES);
  const writer = new Worker(
    `const { workerData: w, parentPort } = require('node:worker_threads');
     const words = new Int32Array(w.buffer);
     parentPort.postMessage('claimed');
     setTimeout(() => {
       words[w.word] = w.offset;
       Atomics.store(words, w.word + 1, w.segment);
     }, 50);`,
    { eval: true, workerData: { buffer: view.buffer, word, offset: offsetOf(block), segment: segmentOf(block) } },
  );
  try {
    await once(writer, 'message');
    const tracer = new MutexTracer();
    region.segments.onContention = tracer.record;
    // Spins until the other thread publishes the chunk, then writes the name into it.
    assert.equal(table.intern('contended', StatKind.Counter, 0), 0);
    const stats = tracer.stats();
    assert.equal(stats.numContentions, 1);
    assert.ok(stats.currentWaitCycles > 0);
    assert.equal(stats.lifetimeWaitCycles, stats.currentWaitCycles);
    // No wait, nothing traced.
    table.intern('uncontended', StatKind.Counter, 0);
    assert.equal(tracer.stats().numContentions, 1);

    const response = await contention(tracer);
    assert.equal(response.contentType, 'application/json');
    assert.equal(
      response.body,
      `{\n "num_contentions": "1",\n "current_wait_cycles": "${stats.currentWaitCycles}",\n "lifetime_wait_cycles": "${stats.lifetimeWaitCycles}"\n}\n`,
    );
  } finally {
    await writer.terminate();
  }
});
