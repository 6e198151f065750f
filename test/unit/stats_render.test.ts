// GET /stats as text and JSON: Envoy's line and document shapes, histograms, usedonly and
// filter, and output that comes in bounded chunks.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatG32, formatShortest } from '../../src/admin/stats/number_format';
import { renderStatsJson, renderStatsText, StatsQuery } from '../../src/admin/stats/render';
import type { StatsSnapshot } from '../../src/stats/sample';
import { counter, gauge, histogram, scalarList } from '../helpers/histogram_samples';

const ALL: StatsQuery = { usedOnly: false, filter: null };

function matching(re: RegExp): StatsQuery {
  return { usedOnly: false, filter: { search: (name) => re.test(name) } };
}

const SNAPSHOT: StatsSnapshot = {
  scalars: scalarList([counter('a.requests', 5), gauge('b.active', 0, false), counter('c.errors', 0)]),
  histograms: [
    histogram('h.idle', [5]),
    histogram('h.latency', [1, 1.025, 2, 3, 4, 5, 6, 7, 8, 100], [1.025, 3]),
    histogram('h.never', []),
  ],
};

const text = (snapshot: StatsSnapshot, q: StatsQuery) => [...renderStatsText(snapshot, q)].join('');
const json = (snapshot: StatsSnapshot, q: StatsQuery) => [...renderStatsJson(snapshot, q)].join('');

test('fmt {} doubles: X.0 when integral, shortest digits otherwise, nan, exponents outside [1e-4, 1e16)', () => {
  const cases: [number, string][] = [
    [0, '0.0'],
    [1, '1.0'],
    [1.025, '1.025'],
    [-2.5, '-2.5'],
    [123456789, '123456789.0'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1e15, '1000000000000000.0'],
    [1e16, '1e+16'],
    [1.5e300, '1.5e+300'],
    [NaN, 'nan'],
    [Infinity, 'inf'],
  ];
  for (const [value, expected] of cases) assert.equal(formatShortest(value), expected, String(value));
});

test('%.32g doubles: integral without a point, exact digits up to 32, exponents outside [1e-4, 1e32)', () => {
  const cases: [number, string][] = [
    [0.5, '0.5'],
    [1, '1'],
    [3600000, '3600000'],
    [0.1, '0.10000000000000000555111512312578'],
    [12.75, '12.75'],
    [0, '0'],
    [0.00001, '1.0000000000000000818030539140313e-05'],
    [1e32, '1.0000000000000000536616220439347e+32'],
    [2 ** -30, '9.31322574615478515625e-10'],
  ];
  for (const [value, expected] of cases) assert.equal(formatG32(value), expected, String(value));
});

test('text: counters and gauges by name, then histograms with interval and cumulative quantiles', () => {
  assert.equal(
    text(SNAPSHOT, ALL),
    [
      'a.requests: 5',
      'b.active: 0',
      'c.errors: 0',
      'h.idle: P0(nan,5.0) P25(nan,5.0) P50(nan,5.0) P75(nan,5.0) P90(nan,5.0) P99(nan,5.0) P99.9(nan,5.0) P100(nan,5.0)',
      'h.latency: P0(1.025,1.0) P25(1.025,2.0) P50(1.025,4.0) P75(3.0,7.0) P90(3.0,8.0) P99(3.0,100.0) P99.9(3.0,100.0) P100(3.0,100.0)',
      'h.never: No recorded values',
      '',
    ].join('\n'),
  );
});

test('text: usedonly and filter apply to histograms too', () => {
  assert.equal(text(SNAPSHOT, { usedOnly: true, filter: null }).split('\n').map((l) => l.split(':')[0]).join(' '), 'a.requests h.idle h.latency ');
  assert.equal(text(SNAPSHOT, matching(/\.err|never/)), 'c.errors: 0\nh.never: No recorded values\n');
  assert.equal(text(SNAPSHOT, matching(/^nothing/)), '');
});

test('JSON: stats, then one histograms element with the supported and computed quantiles', () => {
  const body = json(SNAPSHOT, ALL);
  assert.ok(body.startsWith('{"stats":[{"name":"a.requests","value":5},'), body);
  assert.ok(!body.endsWith('\n'));
  const doc = JSON.parse(body) as { stats: Record<string, unknown>[] };
  assert.deepEqual(doc.stats.slice(0, 3), [
    { name: 'a.requests', value: 5 },
    { name: 'b.active', value: 0 },
    { name: 'c.errors', value: 0 },
  ]);
  assert.equal(doc.stats.length, 4);
  const { histograms } = doc.stats[3] as { histograms: { supported_quantiles: number[]; computed_quantiles: { name: string; values: unknown[] }[] } };
  assert.deepEqual(Object.keys(histograms), ['supported_quantiles', 'computed_quantiles']);
  assert.deepEqual(histograms.supported_quantiles, [0, 25, 50, 75, 90, 95, 99, 99.9, 100]);
  const [idle, latency, never] = histograms.computed_quantiles;
  assert.deepEqual(idle, { name: 'h.idle', values: Array(9).fill({ interval: null, cumulative: 5 }) });
  assert.deepEqual(latency!.name, 'h.latency');
  assert.deepEqual(latency!.values, [
    { interval: 1.025, cumulative: 1 },
    { interval: 1.025, cumulative: 2 },
    { interval: 1.025, cumulative: 4 },
    { interval: 3, cumulative: 7 },
    { interval: 3, cumulative: 8 },
    { interval: 3, cumulative: 100 },
    { interval: 3, cumulative: 100 },
    { interval: 3, cumulative: 100 },
    { interval: 3, cumulative: 100 },
  ]);
  // Never recorded: NaN everywhere, which JSON writes as null.
  assert.deepEqual(never, { name: 'h.never', values: Array(9).fill({ interval: null, cumulative: null }) });
  assert.match(body, /^\{"stats":\[.*\{"histograms":\{"supported_quantiles":\[0,25,50,75,90,95,99,99\.9,100\],"computed_quantiles":\[\{"name":"h\.idle","values":\[\{"interval":null,"cumulative":5\},/);
});

test('JSON: no histogram selected, no histograms element; nothing selected, an empty list', () => {
  assert.equal(json(SNAPSHOT, matching(/^a\./)), '{"stats":[{"name":"a.requests","value":5}]}');
  assert.equal(json(SNAPSHOT, matching(/^h\.lat/)).slice(0, 46), '{"stats":[{"histograms":{"supported_quantiles"');
  assert.equal(json(SNAPSHOT, matching(/^nothing/)), '{"stats":[]}');
  const used = JSON.parse(json(SNAPSHOT, { usedOnly: true, filter: null })) as { stats: { name?: string; histograms?: { computed_quantiles: { name: string }[] } }[] };
  assert.deepEqual(used.stats.slice(0, -1).map((s) => s.name), ['a.requests']);
  assert.deepEqual(used.stats.at(-1)!.histograms!.computed_quantiles.map((h) => h.name), ['h.idle', 'h.latency']);
});

test('JSON names are escaped', () => {
  const snapshot: StatsSnapshot = { scalars: scalarList([counter('odd."name\\', 1)]), histograms: [] };
  assert.deepEqual(JSON.parse(json(snapshot, ALL)), { stats: [{ name: 'odd."name\\', value: 1 }] });
});

test('a large snapshot comes in chunks of about 128 KiB, and a filter that rejects all still pauses', () => {
  const scalars = Array.from({ length: 60_000 }, (_, i) => counter(`cluster.c${String(i).padStart(5, '0')}.upstream_rq_total`, i));
  const snapshot: StatsSnapshot = { scalars: scalarList(scalars), histograms: [] };
  for (const render of [renderStatsText, renderStatsJson]) {
    const chunks = [...render(snapshot, ALL)];
    assert.ok(chunks.length > 10, `${chunks.length} chunks`);
    for (const chunk of chunks) assert.ok(chunk.length < 128 * 1024 + 200, `${chunk.length} bytes`);
  }
  assert.equal(text(snapshot, ALL).split('\n').length, 60_001);
  const rejected = [...renderStatsText(snapshot, matching(/^nothing/))];
  assert.ok(rejected.length >= 3, `${rejected.length} pauses`);
  assert.equal(rejected.join(''), '');
});
