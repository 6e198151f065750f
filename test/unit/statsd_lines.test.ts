// The statsd sinks' lines (src/stats/sinks/statsd_lines.ts): Envoy 1.16's format, the full
// name for statsd, the tag-extracted name with its tags for DogStatsD, and the lines of a flush
// in Envoy's order.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachStatsdLine, StatsdNames, statsdLine, type StatsdType, tagSuffix } from '../../src/stats/sinks/statsd_lines';
import type { SinkSnapshot } from '../../src/stats/sinks/stats_sink';
import { TagProducer } from '../../src/stats/tag_producer';
import { counter, gauge, histogram, scalarList } from '../helpers/histogram_samples';

const tags = new TagProducer({ statsTags: [{ tagName: 'proxy.region', fixedValue: 'eu' }], useAllDefaultTags: true, histogramBucketSettings: [] });

test('a line is <prefix>.<name>:<value>|<type>, a whole number, with DogStatsD tags after the type', () => {
  assert.equal(statsdLine({ head: 'proxy.server.live', tail: '' }, 1, 'g'), 'proxy.server.live:1|g');
  assert.equal(statsdLine({ head: 'p.a', tail: '|#x:y' }, 3, 'c'), 'p.a:3|c|#x:y');
  assert.equal(statsdLine({ head: 'p.a', tail: '' }, 12.6, 'ms'), 'p.a:13|ms');
  assert.equal(tagSuffix([]), '');
  assert.equal(tagSuffix([{ name: 'proxy.cluster_name', value: 'a' }, { name: 'proxy.response_code', value: '200' }]), '|#proxy.cluster_name:a,proxy.response_code:200');
});

test('statsd names a stat by its full name; DogStatsD by its tag-extracted name and tags', () => {
  const plain = new StatsdNames('proxy', null);
  assert.deepEqual(plain.of(3, 'cluster.backend.upstream_rq_200'), { head: 'proxy.cluster.backend.upstream_rq_200', tail: '' });
  const dog = new StatsdNames('dd', tags);
  assert.deepEqual(dog.of(4, 'cluster.backend.upstream_rq_200'), {
    head: 'dd.cluster.upstream_rq',
    tail: '|#proxy.region:eu,proxy.response_code:200,proxy.cluster_name:backend',
  });
  assert.deepEqual(dog.of(-1, 'server.live'), { head: 'dd.server.live', tail: '|#proxy.region:eu' });
});

test('a slot is named once: the name it had the first time is kept', () => {
  const names = new StatsdNames('proxy', tags);
  const first = names.of(7, 'cluster.a.upstream_rq_total');
  assert.equal(names.of(7, 'cluster.a.upstream_rq_total'), first);
  // A stat without a slot is named each time.
  assert.notEqual(names.of(-1, 'cluster.a.upstream_rq_total'), names.of(-1, 'cluster.a.upstream_rq_total'));
});

function linesOf(snapshot: SinkSnapshot, names: StatsdNames): [string, StatsdType][] {
  const out: [string, StatsdType][] = [];
  forEachStatsdLine(snapshot, names, (line, type) => out.push([line, type]));
  return out;
}

test("a flush: used counters' increases, then used gauges' values, then a timer line per interval sample", () => {
  const scalars = scalarList([
    counter('a.counter', 10),
    gauge('b.gauge', 7),
    counter('c.counter', 5),
    counter('d.unused', 0, false),
    gauge('e.unused', 0, false),
    counter('f.zero', 0, true),
  ]);
  const snapshot: SinkSnapshot = {
    scalars,
    counterDeltas: Float64Array.from([4, 0, 5, 0, 0, 0]),
    histograms: [histogram('h.time', [1, 2, 2, 9], [2, 2, 9]), histogram('i.idle', [3], null)],
    timestampMs: 0,
  };
  assert.deepEqual(linesOf(snapshot, new StatsdNames('proxy', null)), [
    ['proxy.a.counter:4|c', 'c'],
    ['proxy.c.counter:5|c', 'c'],
    ['proxy.f.zero:0|c', 'c'],
    ['proxy.b.gauge:7|g', 'g'],
    ['proxy.h.time:2|ms', 'ms'],
    ['proxy.h.time:2|ms', 'ms'],
    ['proxy.h.time:9|ms', 'ms'],
  ]);
});
