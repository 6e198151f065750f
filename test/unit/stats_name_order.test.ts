import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NameBytes } from '../../src/stats/name_bytes';
import { mergeByName, sortByName, sortedByName } from '../../src/stats/name_order';

/** Envoy's order: the bytes of the UTF-8 names. */
const byBytes = (names: readonly string[]) => [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

/**
 * Slots numbered by position: a slot's name is names[slot], all of them in one array of bytes,
 * at offsets that differ from their slots, as in the region.
 */
function bytesOf(names: readonly string[]): NameBytes {
  const encoded = names.map((name) => Buffer.from(name));
  const array = Buffer.concat([Buffer.from('pad'), ...encoded]);
  const starts: number[] = [];
  encoded.reduce((at, bytes) => (starts.push(at), at + bytes.length), 3);
  return { nameArray: () => array, nameStart: (slot) => starts[slot]!, nameLength: (slot) => encoded[slot]!.length };
}

function order(names: readonly string[], batch = Infinity): string[] {
  const steps = sortByName(
    names.map((_, i) => i),
    bytesOf(names),
    batch,
  );
  for (;;) {
    const step = steps.next();
    if (step.done === true) return Array.from(step.value, (slot) => names[slot]!);
  }
}

test('names whose heads are prefixes of one another, or have no second dot, sort as whole names do', () => {
  const names = [
    'cluster.a.zzz',
    'cluster.a-b.x',
    'cluster.a.b.x',
    'cluster.a',
    'cluster.a.',
    'cluster.a.b',
    'cluster',
    'cluster.',
    'cluster.ab.y',
    'cluster..x',
    'server.live',
    'server.live_x',
    'server.live.x',
    'a.b.c',
    'a.b',
    'a.b-',
    'ä.b.c',
    'a.b.\u{1F600}',
    'a.b.\uFFFD',
  ];
  // In several orders, so that each name comes next to different others.
  for (let shift = 0; shift < names.length; shift++) {
    const shuffled = names.map((_, i) => names[(i * 7 + shift) % names.length]!);
    assert.deepEqual(order(shuffled), byBytes(names), `shift ${shift}`);
  }
  assert.deepEqual(sortedByName([], bytesOf([])), new Int32Array(0));
});

test('clusters declared in groups, by two writers interleaved, with late names: the order of a plain sort, at any batch size', () => {
  const groups = [
    ['upstream_rq_total', 'upstream_cx_total', 'upstream_rq_200', 'bind_errors'],
    ['circuit_breakers.default.cx_open', 'circuit_breakers.high.rq_open', 'circuit_breakers.default.rq_open'],
    ['membership_total', 'membership_healthy'],
  ];
  const names: string[] = ['server.uptime', 'http.admin.downstream_rq_2xx'];
  for (let c = 0; c < 300; c += 2) {
    // Two writers take a group each in turn; every seventh cluster has a name of its own.
    for (const group of groups) {
      for (const cluster of [c, c + 1]) names.push(...group.map((rest) => `cluster.c${cluster}.${rest}`));
    }
    if (c % 7 === 0) names.push(`cluster.c${c}.upstream_rq_503`, `cluster.c${c + 1}.aaa`);
  }
  // Created on traffic, long after their clusters.
  names.push('cluster.c4.upstream_rq_404', 'cluster.c299.zzz', 'cluster.c1.', 'cluster.c10');
  const expected = byBytes(names);
  for (const batch of [Infinity, 1, 5, 64]) assert.deepEqual(order(names, batch), expected, `batch ${batch}`);
});

test('random dotted names, many sharing heads: the order of a plain sort', () => {
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const words = ['a', 'b', 'ab', 'a-b', 'a_b', '', 'x.y', 'é', 'z'];
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    const parts = Array.from({ length: 1 + random(4) }, () => words[random(words.length)]!);
    seen.add(parts.join('.'));
  }
  // Runs of one head whose rests start alike and then differ.
  for (let i = 0; i < 500; i++) {
    const head = `c.${words[random(words.length)]}${random(50)}.`;
    for (let k = 0; k < 6; k++) seen.add(head + ['same', words[random(words.length)]!, `r${random(8)}`][Math.min(k, 1 + random(2))]);
  }
  const names = [...seen];
  for (const batch of [Infinity, 3, 100]) assert.deepEqual(order(names, batch), byBytes(names), `batch ${batch}`);
});

test('a batch is a step: the generator yields between batches of names', () => {
  const names = Array.from({ length: 1000 }, (_, i) => `cluster.c${i % 10}.stat_${i}`);
  const steps = sortByName(
    names.map((_, i) => i),
    bytesOf(names),
    100,
  );
  let yields = 0;
  let step = steps.next();
  for (; step.done !== true; step = steps.next()) yields++;
  assert.equal(yields, 9);
  assert.deepEqual(
    Array.from(step.value, (slot) => names[slot]!),
    byBytes(names),
  );
});

test('two sorted lists merge into one in name order, the first list first on a tie', () => {
  const names = ['b', 'a.x', 'c', 'a.x', 'ab', '\u{1F600}', '\uFFFD'];
  const bytes = bytesOf(names);
  const merged = mergeByName(sortedByName([0, 1, 4, 5], bytes), sortedByName([2, 3, 6], bytes), bytes);
  assert.deepEqual(Array.from(merged), [1, 3, 4, 0, 2, 6, 5]);
});

test('clusters declared at two times: each pair of runs interleaves by its own names, whatever the pairs before', () => {
  const firsts = [
    ['m', 'c'],
    ['m', 'c'],
  ];
  const seconds = [
    ['b', 'x'],
    ['n', 'a'],
    ['d', 'z', 'a'],
  ];
  const names: string[] = [];
  for (let c = 0; c < 12; c++) names.push(...firsts[c % 2]!.map((rest) => `cluster.c${c}.${rest}`));
  for (let c = 0; c < 12; c++) names.push(...seconds[c % 3]!.map((rest) => `cluster.c${c}.${rest}`));
  // A third run for some: merged onto a pair already merged.
  for (let c = 0; c < 12; c += 4) names.push(`cluster.c${c}.e`, `cluster.c${c}.0`);
  for (const batch of [Infinity, 2, 7]) assert.deepEqual(order(names, batch), byBytes(names), `batch ${batch}`);
});
