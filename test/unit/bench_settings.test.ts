import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BenchSettingsError, parseDurationSeconds, parseSelection, readSettings } from '../../bench/settings';

test('defaults: 10 s rounds, 3 of them, 50 connections, one wrk thread, every row', () => {
  const settings = readSettings({});
  assert.equal(settings.durationSeconds, 10);
  assert.equal(settings.warmupSeconds, 2);
  assert.equal(settings.rounds, 3);
  assert.equal(settings.connections, 50);
  assert.equal(settings.threads, 1);
  assert.equal(settings.selection.subjects.size, 0);
  assert.equal(settings.selection.groups.size, 0);
});

test('BENCH_DURATION takes seconds or minutes in wrk notation', () => {
  assert.equal(readSettings({ BENCH_DURATION: '5s' }).durationSeconds, 5);
  assert.equal(parseDurationSeconds('30'), 30);
  assert.equal(parseDurationSeconds('2m'), 120);
  for (const bad of ['0s', '1.5s', '10ms', '-3', 'soon', '']) {
    assert.throws(() => parseDurationSeconds(bad), BenchSettingsError, bad);
  }
});

test('BENCH_ONLY mixes subjects and groups and rejects unknown names', () => {
  const selection = parseSelection(' direct,nginx ,tcp');
  assert.deepEqual([...selection.subjects], ['direct', 'nginx']);
  assert.deepEqual([...selection.groups], ['tcp']);
  assert.throws(() => parseSelection('direct,envoy'), /unknown row 'envoy'/);
});
