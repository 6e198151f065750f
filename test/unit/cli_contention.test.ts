import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { contentionHandler, TRACING_DISABLED } from '../../src/admin/contention_handler';
import { MutexTracer } from '../../src/admin/mutex_tracer';
import { NameTable } from '../../src/stats/name_table';
import { StatsRegion } from '../../src/stats/region';
import { LayoutParams, SlotState, StatKind } from '../../src/stats/region_layout';

const LAYOUT: LayoutParams = { maxStats: 64, maxColumns: 2, nameBytes: 64 };

async function contention(tracer: MutexTracer | null) {
  const response = await contentionHandler(tracer).handle({ method: 'GET', path: '/contention', query: new Map(), headers: {}, body: Buffer.alloc(0) });
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

test('a wait on a stat name another thread is writing is traced and served as MutexStats', { timeout: 20000 }, async () => {
  // Learn which slot the name hashes to, in a private region of the same layout.
  const slot = new NameTable(StatsRegion.initialize(new ArrayBuffer(StatsRegion.bytesFor(LAYOUT)), LAYOUT, 0, 0)).intern('contended', StatKind.Counter, 0);

  const shared = new SharedArrayBuffer(StatsRegion.bytesFor(LAYOUT));
  const region = StatsRegion.initialize(shared as unknown as ArrayBuffer, LAYOUT, 0, 0);
  // Another writer has claimed the slot and is still writing the name.
  Atomics.store(region.meta, slot * 2, SlotState.Claiming);
  const writer = new Worker(
    `const { workerData: w, parentPort } = require('node:worker_threads');
     const names = new Uint8Array(w.shared, w.namesOffset + w.slot * w.nameBytes, w.nameBytes);
     const meta = new Int32Array(w.shared, w.metaOffset, w.slot * 2 + 2);
     parentPort.postMessage('claimed');
     setTimeout(() => {
       const bytes = new TextEncoder().encode('contended');
       names.set(bytes);
       meta[w.slot * 2 + 1] = w.kind | (bytes.length << 16);
       Atomics.store(meta, w.slot * 2, w.ready);
     }, 50);`,
    {
      eval: true,
      workerData: {
        shared, slot, kind: StatKind.Counter, ready: SlotState.Ready,
        namesOffset: region.layout.namesOffset, metaOffset: region.layout.slotMetaOffset, nameBytes: LAYOUT.nameBytes,
      },
    },
  );
  try {
    await once(writer, 'message');
    const table = new NameTable(region);
    const tracer = new MutexTracer();
    table.onContention = tracer.record;
    // Spins until the other thread publishes the name, then finds it there.
    assert.equal(table.intern('contended', StatKind.Counter, 0), slot);
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
