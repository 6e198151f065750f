import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sortByName, sortedByName } from '../../src/stats/name_order';

const byCodeUnits = (names: readonly string[]) => [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** Slots numbered by position: a slot's name is names[slot]. */
function order(names: readonly string[], batch = Infinity): string[] {
  const steps = sortByName(
    names.map((_, i) => i),
    (slot) => names[slot]!,
    batch,
  );
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value.map((slot) => names[slot]!);
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
    assert.deepEqual(order(shuffled), byCodeUnits(names), `shift ${shift}`);
  }
  assert.deepEqual(sortedByName([], () => ''), []);
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
  const expected = byCodeUnits(names);
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
  for (const batch of [Infinity, 3, 100]) assert.deepEqual(order(names, batch), byCodeUnits(names), `batch ${batch}`);
});

test('a batch is a step: the generator yields between batches of names', () => {
  const names = Array.from({ length: 1000 }, (_, i) => `cluster.c${i % 10}.stat_${i}`);
  const steps = sortByName(
    names.map((_, i) => i),
    (slot) => names[slot]!,
    100,
  );
  let yields = 0;
  let step = steps.next();
  for (; step.done !== true; step = steps.next()) yields++;
  assert.equal(yields, 9);
  assert.deepEqual(
    step.value.map((slot) => names[slot]!),
    byCodeUnits(names),
  );
});
