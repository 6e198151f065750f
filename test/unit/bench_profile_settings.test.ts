// What `make bench-profile` is asked: the row, the filters before its router, the entries listed, the file written.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readProfileSettings } from '../../bench/profile_settings';

test('unset, the features row is profiled into bench/l7_profile.txt with its top 30 entries', () => {
  const settings = readProfileSettings({}, '/repo');
  assert.equal(settings.row, 'features');
  assert.deepEqual(settings.filters, []);
  assert.equal(settings.top, 30);
  assert.equal(settings.out, '/repo/bench/l7_profile.txt');
  assert.equal(settings.load.durationSeconds, 10);
});

test('another row writes a file of its own unless PROFILE_OUT says where; filters and the entry count are read', () => {
  const h2 = readProfileSettings({ PROFILE_ROW: 'h2', PROFILE_FILTERS: 'fault, cors', PROFILE_TOP: '60', BENCH_DURATION: '5s' }, '/repo');
  assert.equal(h2.row, 'h2');
  assert.deepEqual(h2.filters, ['fault', 'cors']);
  assert.equal(h2.top, 60);
  assert.equal(h2.out, '/repo/bench/l7_profile.h2.txt');
  assert.equal(h2.load.durationSeconds, 5);
  assert.equal(readProfileSettings({ PROFILE_ROW: 'http', PROFILE_OUT: '/tmp/x.txt' }, '/repo').out, '/tmp/x.txt');
  assert.equal(readProfileSettings({ PROFILE_ROW: ' tcp ' }, '/repo').out, '/repo/bench/l7_profile.tcp.txt');
  assert.equal(readProfileSettings({ PROFILE_ROW: 'h2-post' }, '/repo').row, 'h2-post');
  assert.equal(readProfileSettings({ PROFILE_ROW: 'paced' }, '/repo').out, '/repo/bench/l7_profile.paced.txt');
});

test('an unknown row, filter or count is refused by its variable', () => {
  assert.throws(() => readProfileSettings({ PROFILE_ROW: 'tls-handshake' }, '/repo'), { name: 'BenchSettingsError', message: /PROFILE_ROW must be one of features, paced, http, h2, h2-post, tls, tcp, got 'tls-handshake'/ });
  assert.throws(() => readProfileSettings({ PROFILE_FILTERS: 'lua' }, '/repo'), { name: 'BenchSettingsError', message: /PROFILE_FILTERS: no bench configuration for HTTP filter 'lua'/ });
  assert.throws(() => readProfileSettings({ PROFILE_TOP: '0' }, '/repo'), { name: 'BenchSettingsError', message: /PROFILE_TOP must be a positive whole number, got '0'/ });
});
