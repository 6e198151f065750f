// /stats/prometheus: Envoy's tag extraction, metric and label naming, grouping and order, TYPE
// lines, histograms as cumulative buckets, stats_config's tags and bucket settings.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StatsConfig } from '../../src/config/model';
import { HistogramBucketSettings } from '../../src/admin/stats/histogram_bucket_settings';
import type { NameBytes } from '../../src/stats/name_bytes';
import { sortedByName } from '../../src/stats/name_order';
import { PrometheusFormatter } from '../../src/admin/stats/prometheus';
import type { StatsQuery } from '../../src/admin/stats/render';
import type { StatsSnapshot } from '../../src/stats/sample';
import { type NamedBytes, sanitizeName, TagExtractor } from '../../src/admin/stats/tag_extractor';
import { DEFAULT_TAG_RULES } from '../../src/stats/default_tags';
import { firstGroupOpening, firstTokenOf, TagProducer } from '../../src/stats/tag_producer';
import { counter, gauge, histogram, scalarList } from '../helpers/histogram_samples';

const DEFAULTS: StatsConfig = { statsTags: [], useAllDefaultTags: true, histogramBucketSettings: [] };
const ALL: StatsQuery = { usedOnly: false, filter: null };

function render(snapshot: StatsSnapshot, q: StatsQuery = ALL, config: StatsConfig = DEFAULTS): string {
  const formatter = new PrometheusFormatter(new TagExtractor(config), new HistogramBucketSettings(config.histogramBucketSettings));
  return [...formatter.render(snapshot, q)].join('');
}

function tagsOf(name: string, config: StatsConfig = DEFAULTS): [string, string[]] {
  const tagged = new TagProducer(config).produceTags(name);
  return [tagged.name, tagged.tags.map((t) => `${t.name}=${t.value}`)];
}

test('the default rules cut their first group out of the name and take the second as value', () => {
  assert.deepEqual(tagsOf('cluster.foo.upstream_rq_200'), ['cluster.upstream_rq', ['proxy.response_code=200', 'proxy.cluster_name=foo']]);
  assert.deepEqual(tagsOf('http.admin.downstream_rq_4xx'), ['http.downstream_rq_xx', ['proxy.response_code_class=4', 'proxy.http_conn_manager_prefix=admin']]);
  assert.deepEqual(tagsOf('listener.127.0.0.1_10000.downstream_cx_total'), ['listener.downstream_cx_total', ['proxy.listener_address=127.0.0.1_10000']]);
  assert.deepEqual(tagsOf('listener.[__1]_80.downstream_cx_total'), ['listener.downstream_cx_total', ['proxy.listener_address=[__1]_80']]);
  // A listener named by words is not an address.
  assert.deepEqual(tagsOf('listener.admin.downstream_cx_total'), ['listener.admin.downstream_cx_total', []]);
  assert.deepEqual(tagsOf('listener.0.0.0.0_80.http.ingress.downstream_rq_2xx'), [
    'listener.http.downstream_rq_xx',
    ['proxy.response_code_class=2', 'proxy.http_conn_manager_prefix=ingress', 'proxy.listener_address=0.0.0.0_80'],
  ]);
  assert.deepEqual(tagsOf('vhost.web.vcluster.api.upstream_rq_503'), ['vhost.vcluster.upstream_rq', ['proxy.response_code=503', 'proxy.virtual_cluster=api', 'proxy.virtual_host=web']]);
  assert.deepEqual(tagsOf('tcp.echo.downstream_cx_total'), ['tcp.downstream_cx_total', ['proxy.tcp_prefix=echo']]);
  assert.deepEqual(tagsOf('listener_manager.worker_3.dispatcher.loop_duration_us'), ['listener_manager.dispatcher.loop_duration_us', ['proxy.worker_id=worker_3']]);
  assert.deepEqual(tagsOf('cluster.grpc_up.grpc.Greeter.SayHello.success'), [
    'cluster.grpc.success',
    ['proxy.grpc_bridge_method=SayHello', 'proxy.grpc_bridge_service=Greeter', 'proxy.cluster_name=grpc_up'],
  ]);
  assert.deepEqual(tagsOf('server.live'), ['server.live', []]);
});

test('a rule runs only for names of its first token', () => {
  assert.equal(firstTokenOf(String.raw`^cluster\.((.*?)\.)`), 'cluster');
  assert.equal(firstTokenOf(String.raw`^http(?=\.).*?\.rds\.((.*?)\.)\w+?$`), 'http');
  assert.equal(firstTokenOf(String.raw`^auth\.clientssl\.((.*?)\.)\w+?$`), 'auth');
  assert.equal(firstTokenOf(String.raw`_rq(_(\d{3}))$`), '');
  assert.equal(firstTokenOf(String.raw`^(a|b)\.x`), '');
  // `tcp.` rules never see `cluster.tcp.` names.
  assert.deepEqual(tagsOf('cluster.tcp.x'), ['cluster.x', ['proxy.cluster_name=tcp']]);
});

test('the span to cut is found by capturing what precedes the first group, which every default rule allows', () => {
  for (const rule of DEFAULT_TAG_RULES) assert.ok(firstGroupOpening(rule.pattern) > 0, rule.name);
  assert.equal(firstGroupOpening(String.raw`^a\(b[(]c(d)`), 9);
  assert.equal(firstGroupOpening(String.raw`(?:a|b)(?=x)(c)`), 12);
  assert.equal(firstGroupOpening(String.raw`a|b(c)`), -1);
  assert.equal(firstGroupOpening(String.raw`(?<n>a)(b)`), -1);
  assert.equal(firstGroupOpening(String.raw`(?:a)(b)\1`), -1);
  // The cut is the first group's span even where its text also occurs earlier in the name.
  assert.deepEqual(tagsOf('cluster.upstream.upstream.upstream_rq_200'), ['cluster.upstream.upstream_rq', ['proxy.response_code=200', 'proxy.cluster_name=upstream']]);
});

test('fixed tags come first; use_all_default_tags false keeps only the rules named', () => {
  const config: StatsConfig = {
    statsTags: [
      { tagName: 'proxy.cluster_name', fixedValue: null },
      { tagName: 'region', fixedValue: 'eu-1' },
    ],
    useAllDefaultTags: false,
    histogramBucketSettings: [],
  };
  assert.deepEqual(tagsOf('cluster.foo.upstream_rq_200', config), ['cluster.upstream_rq_200', ['region=eu-1', 'proxy.cluster_name=foo']]);
  assert.deepEqual(tagsOf('http.admin.downstream_rq_4xx', config), ['http.admin.downstream_rq_4xx', ['region=eu-1']]);
  const none: StatsConfig = { ...DEFAULTS, useAllDefaultTags: false };
  assert.equal(render({ scalars: scalarList([counter('cluster.foo.upstream_rq_200', 1)]), histograms: [] }, ALL, none), '# TYPE proxy_cluster_foo_upstream_rq_200 counter\nproxy_cluster_foo_upstream_rq_200{} 1\n\n');
  assert.equal(
    render({ scalars: scalarList([gauge('server.live', 1)]), histograms: [] }, ALL, { ...DEFAULTS, statsTags: [{ tagName: 'proxy.node', fixedValue: 'a"b\\c\nd' }] }),
    '# TYPE proxy_server_live gauge\nproxy_server_live{proxy_node="a\\"b\\\\c\\nd"} 1\n\n',
  );
});

test('counters, then gauges, then histograms; grouped by metric name in order, stats by full name', () => {
  const snapshot: StatsSnapshot = {
    scalars: scalarList([
      counter('cluster.bar.upstream_rq_200', 3),
      counter('cluster.bar.upstream_rq_total', 3),
      counter('cluster.foo.upstream_rq_200', 1),
      counter('cluster.foo.upstream_rq_503', 2),
      gauge('cluster.foo.upstream_cx_active', 4),
      counter('http.admin.downstream_rq_4xx', 2),
      gauge('server.live', 1),
    ]),
    histograms: [],
  };
  assert.equal(
    render(snapshot),
    [
      '# TYPE proxy_cluster_upstream_rq counter',
      'proxy_cluster_upstream_rq{proxy_response_code="200",proxy_cluster_name="bar"} 3',
      'proxy_cluster_upstream_rq{proxy_response_code="200",proxy_cluster_name="foo"} 1',
      'proxy_cluster_upstream_rq{proxy_response_code="503",proxy_cluster_name="foo"} 2',
      '',
      '# TYPE proxy_cluster_upstream_rq_total counter',
      'proxy_cluster_upstream_rq_total{proxy_cluster_name="bar"} 3',
      '',
      '# TYPE proxy_http_downstream_rq_xx counter',
      'proxy_http_downstream_rq_xx{proxy_response_code_class="4",proxy_http_conn_manager_prefix="admin"} 2',
      '',
      '# TYPE proxy_cluster_upstream_cx_active gauge',
      'proxy_cluster_upstream_cx_active{proxy_cluster_name="foo"} 4',
      '',
      '# TYPE proxy_server_live gauge',
      'proxy_server_live{} 1',
      '',
      '',
    ].join('\n'),
  );
});

test('names are sanitized; names that sanitize alike share one TYPE line', () => {
  const snapshot: StatsSnapshot = { scalars: scalarList([counter('a-b.c', 1), counter('a_b.c', 2), counter('tag.x', 3)]), histograms: [] };
  const config: StatsConfig = { ...DEFAULTS, statsTags: [{ tagName: '9.lives', fixedValue: 'v' }] };
  assert.equal(render(snapshot, ALL, config), '# TYPE proxy_a_b_c counter\nproxy_a_b_c{_9_lives="v"} 1\nproxy_a_b_c{_9_lives="v"} 2\n\n# TYPE proxy_tag_x counter\nproxy_tag_x{_9_lives="v"} 3\n\n');
});

test('histograms: cumulative count per bucket, +Inf, sum and count; interval data is not shown', () => {
  const snapshot: StatsSnapshot = {
    scalars: scalarList([]),
    histograms: [histogram('cluster.foo.upstream_cx_connect_ms', [0.25, 3, 3, 12.75, 7000], [99]), histogram('server.initialization_time_ms', [])],
  };
  const lines = render(snapshot).split('\n');
  assert.deepEqual(lines.slice(0, 7), [
    '# TYPE proxy_cluster_upstream_cx_connect_ms histogram',
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="0.5"} 1',
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="1"} 1',
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="5"} 3',
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="10"} 3',
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="25"} 4',
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="50"} 4',
  ]);
  assert.deepEqual(lines.slice(19, 26), [
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="3600000"} 5',
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="+Inf"} 5',
    'proxy_cluster_upstream_cx_connect_ms_sum{proxy_cluster_name="foo"} 7019',
    'proxy_cluster_upstream_cx_connect_ms_count{proxy_cluster_name="foo"} 5',
    '',
    '# TYPE proxy_server_initialization_time_ms histogram',
    'proxy_server_initialization_time_ms_bucket{le="0.5"} 0',
  ]);
  assert.deepEqual(lines.slice(-5), [
    'proxy_server_initialization_time_ms_bucket{le="+Inf"} 0',
    'proxy_server_initialization_time_ms_sum{} 0',
    'proxy_server_initialization_time_ms_count{} 0',
    '',
    '',
  ]);
  assert.equal(lines.filter((l) => l.includes('_bucket{proxy_cluster_name="foo",le=')).length, 19 + 1);
});

test('histogram_bucket_settings: the first rule matching the full name gives the buckets', () => {
  const config: StatsConfig = {
    ...DEFAULTS,
    histogramBucketSettings: [
      { match: { kind: 'suffix', value: '_MS', ignoreCase: true }, buckets: [0.1, 2.5, 10] },
      { match: { kind: 'prefix', value: 'cluster.', ignoreCase: false }, buckets: [1] },
    ],
  };
  const snapshot: StatsSnapshot = {
    scalars: scalarList([]),
    histograms: [histogram('cluster.foo.upstream_cx_connect_ms', [3, 12]), histogram('cluster.foo.upstream_rq_size', [3]), histogram('http.x.downstream_rq_size', [3])],
  };
  const buckets = render(snapshot, ALL, config)
    .split('\n')
    .filter((l) => l.includes('_bucket'));
  assert.deepEqual(buckets.slice(0, 4), [
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="0.10000000000000000555111512312578"} 0',
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="2.5"} 0',
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="10"} 1',
    'proxy_cluster_upstream_cx_connect_ms_bucket{proxy_cluster_name="foo",le="+Inf"} 2',
  ]);
  assert.deepEqual(buckets.slice(4, 6), [
    'proxy_cluster_upstream_rq_size_bucket{proxy_cluster_name="foo",le="1"} 0',
    'proxy_cluster_upstream_rq_size_bucket{proxy_cluster_name="foo",le="+Inf"} 1',
  ]);
  assert.equal(buckets.filter((l) => l.startsWith('proxy_http_downstream_rq_size_bucket')).length, 20);
});

test('usedonly and filter select counters, gauges and histograms alike', () => {
  const snapshot: StatsSnapshot = {
    scalars: scalarList([counter('cluster.foo.upstream_rq_total', 0), counter('cluster.foo.upstream_rq_200', 2), gauge('server.live', 1)]),
    histograms: [histogram('cluster.foo.upstream_rq_time', []), histogram('cluster.foo.upstream_cx_length_ms', [1])],
  };
  const types = (q: StatsQuery) =>
    render(snapshot, q)
      .split('\n')
      .filter((l) => l.startsWith('# TYPE'))
      .map((l) => l.split(' ')[2]);
  assert.deepEqual(types(ALL), ['proxy_cluster_upstream_rq', 'proxy_cluster_upstream_rq_total', 'proxy_server_live', 'proxy_cluster_upstream_cx_length_ms', 'proxy_cluster_upstream_rq_time']);
  assert.deepEqual(types({ usedOnly: true, filter: null }), ['proxy_cluster_upstream_rq', 'proxy_server_live', 'proxy_cluster_upstream_cx_length_ms']);
  assert.deepEqual(types({ usedOnly: false, filter: { search: (name) => /rq_t/.test(name) } }), ['proxy_cluster_upstream_rq_total', 'proxy_cluster_upstream_rq_time']);
  assert.equal(render(snapshot, { usedOnly: false, filter: { search: () => false } }), '');
});

test('a name is extracted once: the second render reuses the cached names', () => {
  const extractor = new TagExtractor(DEFAULTS);
  const first = extractor.prometheusName('cluster.foo.upstream_rq_200');
  assert.deepEqual({ name: first.name, labels: first.labels }, { name: 'proxy_cluster_upstream_rq', labels: 'proxy_response_code="200",proxy_cluster_name="foo"' });
  assert.equal(Buffer.from(first.labelBytes).toString(), first.labels);
  assert.equal(extractor.prometheusName('cluster.foo.upstream_rq_200'), first);
  // Stats of one cluster share their label text.
  assert.equal(extractor.prometheusName('cluster.foo.upstream_cx_total').labels, extractor.prometheusName('cluster.foo.upstream_rq_total').labels);
});

test('histogram_bucket_settings by safe_regex: RE2 against the whole name', () => {
  const config: StatsConfig = {
    ...DEFAULTS,
    histogramBucketSettings: [{ match: { kind: 'safe_regex', value: 'http\\.[^.]+\\.downstream_rq_\\w+', ignoreCase: false }, buckets: [7] }],
  };
  const snapshot: StatsSnapshot = {
    scalars: scalarList([]),
    // The second only contains a match: a full match is required, as Envoy's StringMatcher does.
    histograms: [histogram('http.x.downstream_rq_size', [3, 9]), histogram('listener.http.x.downstream_rq_size', [3])],
  };
  const buckets = render(snapshot, ALL, config)
    .split('\n')
    .filter((l) => l.includes('_bucket'));
  assert.deepEqual(buckets.slice(0, 2), [
    'proxy_http_downstream_rq_size_bucket{proxy_http_conn_manager_prefix="x",le="7"} 1',
    'proxy_http_downstream_rq_size_bucket{proxy_http_conn_manager_prefix="x",le="+Inf"} 2',
  ]);
  assert.equal(buckets.filter((l) => l.startsWith('proxy_listener_')).length, 20);
});

test('the grouping is kept while the snapshot lists the same stats, and made again when one is added', () => {
  let lookups = 0;
  class CountingExtractor extends TagExtractor {
    override nameAll(list: NamedBytes, ids: Int32Array, from: number, to: number, metrics: Int32Array, labels: Uint8Array[]) {
      lookups += to - from;
      super.nameAll(list, ids, from, to, metrics, labels);
    }
  }
  const formatter = new PrometheusFormatter(new CountingExtractor(DEFAULTS), new HistogramBucketSettings([]));
  const withIds = (...scalars: [number, ReturnType<typeof counter>][]): StatsSnapshot => ({
    scalars: scalarList(scalars.map(([id, s]) => ({ ...s, id }))),
    histograms: [],
  });
  const lines = (s: StatsSnapshot) => [...formatter.render(s, ALL)].join('').split('\n').filter((l) => l !== '');
  assert.deepEqual(lines(withIds([0, counter('cluster.a.upstream_rq_200', 1)], [1, gauge('server.live', 1)])), [
    '# TYPE proxy_cluster_upstream_rq counter',
    'proxy_cluster_upstream_rq{proxy_response_code="200",proxy_cluster_name="a"} 1',
    '# TYPE proxy_server_live gauge',
    'proxy_server_live{} 1',
  ]);
  assert.equal(lookups, 2);
  // Same stats, new values: no lookup, the values of this snapshot.
  assert.deepEqual(lines(withIds([0, counter('cluster.a.upstream_rq_200', 7)], [1, gauge('server.live', 0)]))[1], 'proxy_cluster_upstream_rq{proxy_response_code="200",proxy_cluster_name="a"} 7');
  assert.equal(lookups, 2);
  // A stat added in between: grouped again, the new one in its place.
  assert.deepEqual(
    lines(withIds([2, counter('cluster.a.upstream_rq_100', 3)], [0, counter('cluster.a.upstream_rq_200', 7)], [1, gauge('server.live', 0)])).slice(0, 3),
    [
      '# TYPE proxy_cluster_upstream_rq counter',
      'proxy_cluster_upstream_rq{proxy_response_code="100",proxy_cluster_name="a"} 3',
      'proxy_cluster_upstream_rq{proxy_response_code="200",proxy_cluster_name="a"} 7',
    ],
  );
  // Stats without a slot id are never taken for the same ones.
  const anonymous: StatsSnapshot = { scalars: scalarList([gauge('server.live', 1)]), histograms: [] };
  lines(anonymous);
  lines(anonymous);
  assert.equal(lookups, 2 + 3 + 1 + 1);
});

/** What the rules make of a name, without any of the extractor's shortcuts. */
function reference(name: string, config: StatsConfig): { name: string; labels: string } {
  const tagged = new TagProducer(config).produceTags(name);
  const labels = tagged.tags.map((t) => `${sanitizeName(t.name)}="${t.value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))}"`);
  return { name: sanitizeName(`proxy_${tagged.name}`), labels: labels.join(',') };
}

test('a cluster stat named from its shape is what the rules make of it, whatever the cluster name', () => {
  const clusters = ['c1', 'x', 'y', 'grpc', 'ssl', 'tcp', 'a_rq_200', 'we"ird\\', '200', 'ciphers', 'upstream_rq_5xx', ''];
  const rests = [
    '.upstream_rq_total',
    '.upstream_rq_200',
    '.upstream_rq_5xx',
    '.circuit_breakers.default.cx_open',
    '.grpc.Greeter.SayHello.success',
    '.grpc.Greeter.total',
    '.ssl.ciphers.ECDHE-RSA-AES128-SHA',
    '.',
    '',
    // Ends like the first: a guess from the cluster before must check the whole rest.
    '.x.upstream_rq_total',
  ];
  const configs: StatsConfig[] = [
    DEFAULTS,
    { ...DEFAULTS, statsTags: [{ tagName: 'region', fixedValue: 'x' }] },
    { ...DEFAULTS, statsTags: [{ tagName: 'proxy.cluster_name', fixedValue: 'x' }] },
    { statsTags: [{ tagName: 'proxy.cluster_name', fixedValue: null }], useAllDefaultTags: false, histogramBucketSettings: [] },
    { statsTags: [{ tagName: 'proxy.response_code', fixedValue: null }], useAllDefaultTags: false, histogramBucketSettings: [] },
  ];
  // Cluster by cluster, as names come in name order (one cluster's labels reused across its
  // stats, its rests guessed from the cluster before), and rest by rest (the cluster changing
  // at every name).
  const byCluster = clusters.flatMap((cluster) => rests.map((rest) => `cluster.${cluster}${rest}`));
  const byRest = rests.flatMap((rest) => clusters.map((cluster) => `cluster.${cluster}${rest}`));
  // Cluster by cluster, but each with its rests in another order than the cluster before, or one short.
  const reordered = clusters.flatMap((cluster, i) => (i % 2 === 0 ? rests : [...rests].reverse()).map((rest) => `cluster.${cluster}${rest}`));
  const gappy = clusters.flatMap((cluster, i) => rests.filter((_, k) => k !== i % rests.length).map((rest) => `cluster.${cluster}${rest}`));
  for (const config of configs) {
    for (const order of [byCluster, byRest, reordered, gappy]) {
      const extractor = new TagExtractor(config);
      for (const name of order) {
        const { name: metric, labels, labelBytes } = extractor.prometheusName(name);
        assert.deepEqual({ name: metric, labels }, reference(name, config), `${name} with ${JSON.stringify(config.statsTags)}`);
        assert.equal(Buffer.from(labelBytes).toString(), labels);
      }
    }
  }
});

test('stats named from the runs the name sort finds are what the rules make of them, and are not read again', () => {
  // The first run of the shape is of a cluster the rules read otherwise (grpc): the runs after
  // it are named all the same.
  const heads = ['cluster.grpc.', 'cluster.c1.', 'cluster.c2.', 'http.c3.', 'cluster..', 'cluster.ssl.', 'cluster.a_rq_200.', 'cluster.c4.'];
  const rests = ['upstream_rq_total', 'upstream_rq_200', 'circuit_breakers.default.cx_open', 'grpc.Greeter.SayHello.success', 'ssl.ciphers.X', 'x.upstream_rq_total', ''];
  // Each head's names in consecutive slots, as a cluster's are interned: one run each, of one shape.
  const names = heads.flatMap((head) => rests.map((rest) => head + rest));
  const encoded = names.map((name) => Buffer.from(name));
  const array = Buffer.concat(encoded);
  const starts = encoded.map((_, i) => encoded.slice(0, i).reduce((n, b) => n + b.length, 0));
  const unread = new Set<number>();
  const read = (slot: number) => {
    assert.ok(!unread.has(slot), `${names[slot]} read again`);
    return slot;
  };
  const bytes: NameBytes = {
    nameArray: (slot) => (read(slot), array),
    nameStart: (slot) => starts[read(slot)]!,
    nameLength: (slot) => encoded[read(slot)]!.length,
  };
  const extractor = new TagExtractor(DEFAULTS);
  const order = sortedByName(
    names.map((_, slot) => slot),
    bytes,
    (n, slots, cut, shape) => extractor.nameRun(n, slots, cut, shape),
  );
  // A run of the shape after the first, of a cluster the rules do not read otherwise, is named whole.
  for (const rest of rests.slice(0, 4)) unread.add(names.indexOf(`cluster.c4.${rest}`));
  const sorted: NamedBytes = {
    nameArray: (i) => bytes.nameArray(order[i]!),
    nameStart: (i) => bytes.nameStart(order[i]!),
    nameLength: (i) => bytes.nameLength(order[i]!),
    name: (i) => names[order[i]!]!,
  };
  const metrics = new Int32Array(order.length);
  const labels: Uint8Array[] = [];
  extractor.nameAll(sorted, order, 0, order.length, metrics, labels);
  for (let i = 0; i < order.length; i++) {
    const name = names[order[i]!]!;
    assert.deepEqual({ name: extractor.metricName(metrics[i]!), labels: Buffer.from(labels[i]!).toString() }, reference(name, DEFAULTS), name);
  }
});
