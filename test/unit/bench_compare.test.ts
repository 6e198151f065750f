import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildOrder, compareRounds, spread, type RoundPair } from '../../bench/ab_summary';
import { formatChange, formatComparison } from '../../bench/ab_table';
import { CompareUsageError, parseCompareArgs, readCompareSettings } from '../../bench/compare_settings';
import { proxyBootstrap } from '../../bench/proxy_config';
import { loadBootstrap } from '../../src/config/load';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import type { LoadResult } from '../../bench/load_result';
import { BenchSettingsError } from '../../bench/settings';
import { SummaryError, type Round } from '../../bench/summary';

/** A 10 s wrk run of `requests` requests during which the proxy used `cpuTicks` ticks (100 Hz). */
function run(requests: number, cpuTicks: number, overrides: Partial<LoadResult> = {}): Round {
  const load: LoadResult = {
    requests,
    durationUs: 10_000_000,
    requestsPerSecond: requests / 10,
    latency: { p50Us: 1000, p75Us: 1500, p90Us: 2000, p99Us: 4000 },
    errorResponses: 0,
    socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
    ...overrides,
  };
  return { load, cpuTicks };
}

/** A round where BASE costs `baseUs` and HEAD `headUs` per request: 100,000 requests each. */
function pair(baseUs: number, headUs: number): RoundPair {
  // At 100 Hz a tick is 10,000 us, so 100,000 requests at `us` each take `us * 10` ticks.
  return { base: run(100_000, baseUs * 10), head: run(100_000, headUs * 10) };
}

test('the command line takes exactly one revision, never an option', () => {
  assert.equal(parseCompareArgs(['8d5cf73']), '8d5cf73');
  assert.equal(parseCompareArgs(['main~3']), 'main~3');
  assert.throws(() => parseCompareArgs([]), { name: 'CompareUsageError', message: /^usage: / });
  assert.throws(() => parseCompareArgs(['']), CompareUsageError);
  assert.throws(() => parseCompareArgs(['  ']), CompareUsageError);
  assert.throws(() => parseCompareArgs(['main', 'HEAD']), { name: 'CompareUsageError', message: /^usage: / });
  assert.throws(() => parseCompareArgs(['--output=/tmp/x']), /'--output=\/tmp\/x' is not a revision/);
});

test('6 rounds of 10 s by default; COMPARE_ROUNDS and BENCH_DURATION change them', () => {
  const defaults = readCompareSettings({});
  assert.equal(defaults.rounds, 6);
  assert.equal(defaults.load.durationSeconds, 10);
  assert.equal(defaults.load.warmupSeconds, 2);
  assert.equal(readCompareSettings({ COMPARE_ROUNDS: '' }).rounds, 6);
  const set = readCompareSettings({ COMPARE_ROUNDS: '2', BENCH_DURATION: '3s' });
  assert.equal(set.rounds, 2);
  assert.equal(set.load.durationSeconds, 3);
  for (const bad of ['0', '-1', '1.5', 'six', '2 rounds']) {
    assert.throws(() => readCompareSettings({ COMPARE_ROUNDS: bad }), { name: 'CompareUsageError', message: new RegExp(`got '${bad}'`) }, bad);
  }
  assert.throws(() => readCompareSettings({ BENCH_DURATION: '3 seconds' }), BenchSettingsError);
});

test("COMPARE_ROWS picks rows of http, http-16k, tcp, h2, h2-post and tls, in the table's order; unset, the first three", () => {
  assert.deepEqual(readCompareSettings({}).rows, ['http', 'http-16k', 'tcp']);
  assert.deepEqual(readCompareSettings({ COMPARE_ROWS: 'tcp, http' }).rows, ['http', 'tcp']);
  assert.deepEqual(readCompareSettings({ COMPARE_ROWS: 'h2' }).rows, ['h2']);
  assert.deepEqual(readCompareSettings({ COMPARE_ROWS: 'h2-post,h2' }).rows, ['h2', 'h2-post']);
  assert.deepEqual(readCompareSettings({ COMPARE_ROWS: 'tls,http' }).rows, ['http', 'tls']);
  assert.throws(() => readCompareSettings({ COMPARE_ROWS: 'http,tls-handshake' }), { name: 'CompareUsageError', message: /'tls-handshake' is not one of http, http-16k, tcp, h2, h2-post, tls/ });
});

test('COMPARE_HEAD names the revision HEAD is built from; unset, HEAD is this checkout', () => {
  assert.equal(readCompareSettings({}).headRevision, null);
  assert.equal(readCompareSettings({ COMPARE_HEAD: 'abc123' }).headRevision, 'abc123');
  assert.throws(() => readCompareSettings({ COMPARE_HEAD: '--all' }), { name: 'CompareUsageError', message: /'--all' is not a revision/ });
});

test('COMPARE_HEAD_ACCESS_LOG=1 gives HEAD alone an access log; anything but 0 or 1 is refused', () => {
  assert.equal(readCompareSettings({}).headAccessLog, false);
  assert.equal(readCompareSettings({ COMPARE_HEAD_ACCESS_LOG: '0' }).headAccessLog, false);
  assert.equal(readCompareSettings({ COMPARE_HEAD_ACCESS_LOG: '1' }).headAccessLog, true);
  assert.throws(() => readCompareSettings({ COMPARE_HEAD_ACCESS_LOG: 'yes' }), { name: 'CompareUsageError', message: /got 'yes'/ });
});

test('the access-logged bootstrap carries a file access log on either layer; the plain one none', () => {
  const filterOf = (layer: 'http' | 'tcp', accessLogPath?: string): Record<string, unknown> => {
    const bootstrap = proxyBootstrap({ layer, listenPort: 1, upstreamPort: 2, adminPort: 3, accessLogPath }) as {
      static_resources: { listeners: { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] }[] };
    };
    return bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
  };
  for (const layer of ['http', 'tcp'] as const) {
    assert.equal(filterOf(layer).access_log, undefined);
    assert.deepEqual((filterOf(layer, '/tmp/a.log').access_log as { typed_config: { path: string } }[])[0].typed_config.path, '/tmp/a.log');
  }
});

test('COMPARE_HEAD_ROUTES=<n> gives HEAD an n-route table whose last route is the one the bench requests', () => {
  assert.equal(readCompareSettings({}).headRoutes, 1);
  assert.equal(readCompareSettings({ COMPARE_HEAD_ROUTES: '1000' }).headRoutes, 1000);
  assert.throws(() => readCompareSettings({ COMPARE_HEAD_ROUTES: '0' }), { name: 'CompareUsageError', message: /COMPARE_HEAD_ROUTES must be a positive whole number/ });
  const routesOf = (routeCount?: number): { match: Record<string, string> }[] => {
    const bootstrap = proxyBootstrap({ layer: 'http', listenPort: 1, upstreamPort: 2, adminPort: 3, routeCount }) as {
      static_resources: { listeners: { filter_chains: { filters: { typed_config: { route_config: { virtual_hosts: { routes: { match: Record<string, string> }[] }[] } } }[] }[] }[] };
    };
    return bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes;
  };
  assert.deepEqual(routesOf().map((r) => r.match), [{ prefix: '/' }]);
  const large = routesOf(1000);
  assert.equal(large.length, 1000);
  assert.deepEqual(large.at(-1)!.match, { prefix: '/' });
  // None before the last takes the bench's paths.
  for (const { match } of large.slice(0, -1)) for (const path of ['/13b', '/16k']) assert.ok(!path.startsWith(match.prefix ?? '\0') && path !== match.path);
});

test('COMPARE_HEAD_FILTERS=<names> puts those filters, configured to act on nothing, before HEAD\'s router; the proxy loads the result', () => {
  assert.deepEqual(readCompareSettings({}).headFilters, []);
  assert.deepEqual(readCompareSettings({ COMPARE_HEAD_FILTERS: 'cors, fault,local_ratelimit' }).headFilters, ['cors', 'fault', 'local_ratelimit']);
  assert.throws(() => readCompareSettings({ COMPARE_HEAD_FILTERS: 'lua' }), { name: 'CompareUsageError', message: /no bench configuration for HTTP filter 'lua'/ });
  const bootstrap = proxyBootstrap({ layer: 'http', listenPort: 1, upstreamPort: 2, adminPort: 3, httpFilters: ['cors', 'fault', 'local_ratelimit'] }) as {
    static_resources: { listeners: { filter_chains: { filters: { typed_config: { http_filters: { name: string }[] } }[] }[] }[] };
  };
  const names = bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters.map((f) => f.name);
  assert.deepEqual(names, ['proxy.filters.http.cors', 'proxy.filters.http.fault', 'proxy.filters.http.local_ratelimit', 'proxy.filters.http.router']);
  // The configuration pipeline takes it as it stands.
  loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
});

test('BASE runs first in even rounds and HEAD in odd ones, so each goes first equally often', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((round) => buildOrder(round).join(',')),
    ['base,head', 'head,base', 'base,head', 'head,base', 'base,head', 'head,base'],
  );
});

test('a spread is the median, minimum and maximum', () => {
  assert.deepEqual(spread([3, 1, 2, 10]), { median: 2.5, min: 1, max: 10 });
  assert.throws(() => spread([]), SummaryError);
});

test('each build reports its CPU per request over the rounds, and HEAD/BASE of the medians', () => {
  const comparison = compareRounds([pair(20, 18), pair(22, 19), pair(21, 23)], 100);
  assert.deepEqual(comparison.base.cpu, { median: 21, min: 20, max: 22 });
  assert.deepEqual(comparison.head.cpu, { median: 19, min: 18, max: 23 });
  assert.equal(comparison.ratioOfMedians, 19 / 21);
  assert.equal(comparison.ratioOfMinima, 18 / 20);
  assert.equal(comparison.base.summary.requestsPerSecond, 10_000);
});

test('rounds in two modes move the ratio of the medians; the ratio of the minima stays', () => {
  // The same cost on both builds, the machine slow in some rounds: HEAD is slow in three of five, BASE in two.
  const comparison = compareRounds([pair(21, 21), pair(26, 21), pair(21, 26), pair(26, 26), pair(21, 26)], 100);
  assert.ok(Math.abs(comparison.ratioOfMedians - 26 / 21) < 1e-12);
  assert.equal(comparison.ratioOfMinima, 1);
});

test('the per-round ratios cancel a drift of the machine that widens each build\'s own range', () => {
  // The machine's speed changes from round to round; HEAD costs 10% less than BASE in every round.
  const comparison = compareRounds([pair(20, 18), pair(40, 36), pair(30, 27), pair(60, 54)], 100);
  assert.deepEqual(comparison.base.cpu, { median: 35, min: 20, max: 60 });
  assert.deepEqual(comparison.head.cpu, { median: 31.5, min: 18, max: 54 });
  for (const ratio of [comparison.ratioOfMedians, comparison.roundRatios.median, comparison.roundRatios.min, comparison.roundRatios.max]) {
    assert.ok(Math.abs(ratio - 0.9) < 1e-12, String(ratio));
  }
});

test('the ratio of the medians and the median of the rounds\' ratios are computed apart', () => {
  const comparison = compareRounds([pair(10, 27), pair(20, 9), pair(30, 18)], 100);
  assert.ok(Math.abs(comparison.ratioOfMedians - 0.9) < 1e-12);
  // 2.7, 0.45 and 0.6.
  assert.ok(Math.abs(comparison.roundRatios.median - 0.6) < 1e-12);
  assert.ok(Math.abs(comparison.roundRatios.min - 0.45) < 1e-12);
  assert.ok(Math.abs(comparison.roundRatios.max - 2.7) < 1e-12);
});

test('errors are summed per build, and a run without a request or a CPU sample is refused', () => {
  const withErrors = compareRounds(
    [
      { base: run(100_000, 200), head: run(100_000, 200, { errorResponses: 3 }) },
      { base: run(100_000, 200), head: run(100_000, 200, { errorResponses: 4 }) },
    ],
    100,
  );
  assert.equal(withErrors.head.summary.errorResponses, 7);
  assert.equal(withErrors.base.summary.errorResponses, 0);
  assert.throws(() => compareRounds([{ base: run(0, 0), head: run(100, 1) }], 100), /round 1 of BASE has no CPU per request \(0 requests/);
  assert.throws(() => compareRounds([pair(20, 20), { base: run(100, 1), head: { ...run(100, 1), cpuTicks: null } }], 100), /round 2 of HEAD/);
  assert.throws(() => compareRounds([], 100), /no rounds/);
});

test('a change reads as a ratio and a signed percentage', () => {
  assert.equal(formatChange(0.977), '0.977 (-2.3%)');
  assert.equal(formatChange(1.0312), '1.031 (+3.1%)');
  assert.equal(formatChange(0.99996), '1.000 (0.0%)');
  assert.equal(formatChange(1), '1.000 (0.0%)');
});

test('the comparison table aligns each row and keeps a failed row in place', () => {
  const table = formatComparison(2, [
    { label: 'http', outcome: { kind: 'compared', comparison: compareRounds([pair(20, 18), pair(22, 20)], 100) } },
    { label: 'http-16k', outcome: { kind: 'failed', error: 'BASE proxy http exited with code 1 before serving\nError: boom' } },
    {
      label: 'tcp',
      outcome: {
        kind: 'compared',
        comparison: compareRounds(
          [
            { base: run(100_000, 150), head: run(100_000, 160, { socketErrors: { connect: 0, read: 2, write: 0, timeout: 0 } }) },
            { base: run(100_000, 170), head: run(100_000, 160) },
          ],
          100,
        ),
      },
    },
  ]);
  assert.equal(
    table,
    [
      'CPU us per request of the proxy under test: median (min-max) over 2 rounds',
      "HEAD/BASE: the ratio of the medians; per round: the median (min-max) of each round's ratio; min: the ratio of the cheapest rounds. Below 1, HEAD is cheaper",
      '  row            BASE us/req       HEAD us/req      HEAD/BASE  per-round HEAD/BASE  min HEAD/BASE  BASE req/s  HEAD req/s  errors',
      '  http      21.0 (20.0-22.0)  19.0 (18.0-20.0)  0.905 (-9.5%)  0.905 (0.900-0.909)          0.900      10,000      10,000  none',
      '  http-16k  failed: BASE proxy http exited with code 1 before serving',
      '  tcp       16.0 (15.0-17.0)  16.0 (16.0-16.0)   1.000 (0.0%)  1.004 (0.941-1.067)          1.067      10,000      10,000  BASE none; HEAD read 2',
    ].join('\n'),
  );
});
