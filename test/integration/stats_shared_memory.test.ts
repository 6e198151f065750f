// Stats written by concurrent processes on one shared-memory region add up exactly.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import * as addon from '../../src/native/addon';
import { NameTable } from '../../src/stats/name_table';
import { readStats } from '../../src/stats/reader';
import { StatsRegion } from '../../src/stats/region';

const run = promisify(execFile);
const params = { maxStats: 4096, maxColumns: 8, nameBytes: 64 };

test('four processes incrementing the same stats concurrently lose nothing', { timeout: 60_000 }, async () => {
  const name = `/proxy_test_stats_${process.pid}`;
  const region = StatsRegion.initialize(addon.shmCreate(name, StatsRegion.bytesFor(params)), params, 0, Date.now());
  try {
    const writer = path.join(__dirname, '..', 'helpers', 'stats_writer.js');
    const iterations = 200_000;
    const args = [writer, name, String(params.maxStats), String(params.maxColumns), String(params.nameBytes), String(iterations)];
    await Promise.all([1, 2, 3, 4].map(() => run(process.execPath, args, { timeout: 50_000 })));
    const stats = new Map(readStats(region, new NameTable(region)).map((s) => [s.name, s.value]));
    assert.equal(stats.get('shared.requests'), 4 * iterations);
    assert.equal(stats.get('shared.active'), 4 * (iterations / 2));
    // Each of the 64 racing names exists once, and its counts add up.
    const racing = [...stats.keys()].filter((k) => k.startsWith('race.'));
    assert.equal(racing.length, 64);
    assert.equal(racing.reduce((sum, k) => sum + stats.get(k)!, 0), 4 * iterations);
  } finally {
    addon.shmUnlink(name);
  }
});
