// What one LDS update changes: added, modified, removed, left alone, and Envoy's refusals (a
// static listener's name, another address or reuse_port under a serving name, an address another
// listener holds).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CurrentListener, keptFilterChains, planListenerUpdate } from '../../src/listener/lds_update_plan';

const at = (port: number, address = '127.0.0.1') => ({ address, port });
const current = (...listeners: CurrentListener[]) => new Map(listeners.map((l) => [l.name, l]));

test('new, changed, unchanged and missing listeners; a change of address is refused', () => {
  const serving = current(
    { name: 'same', content: 's', address: at(1000), reusePort: false },
    { name: 'inPlace', content: 'old', address: at(1001), reusePort: false },
    { name: 'moves', content: 'old', address: at(1002), reusePort: false },
    { name: 'gone', content: 'g', address: at(1003), reusePort: false },
  );
  const candidates = [
    { name: 'same', content: 's', address: at(1000), reusePort: false },
    { name: 'inPlace', content: 'new', address: at(1001), reusePort: false },
    { name: 'moves', content: 'new', address: at(1012), reusePort: false },
    { name: 'fresh', content: 'f', address: at(0), reusePort: false },
  ];
  const plan = planListenerUpdate([], serving, new Set(candidates.map((c) => c.name)), candidates);
  assert.deepEqual(plan.added.map((c) => c.name), ['fresh']);
  assert.deepEqual(plan.modified.map((c) => c.name), ['inPlace']);
  assert.deepEqual(plan.removed, ['gone']);
  assert.deepEqual(plan.errors, [{ name: 'moves', reason: "error updating listener: 'moves' has a different address '127.0.0.1:1012' from existing listener" }]);
});

test("a static listener's name and a held address are refused; port 0 never conflicts", () => {
  const statics = [{ name: 'static', address: at(2000) }];
  // A listener refused by the update's checks keeps its address: it keeps serving.
  const serving = current({ name: 'kept', content: 'k', address: at(2001), reusePort: false });
  const candidates = [
    { name: 'static', content: 'x', address: at(2100), reusePort: false },
    { name: 'onStatic', content: 'x', address: at(2000), reusePort: false },
    { name: 'onKept', content: 'x', address: at(2001), reusePort: false },
    { name: 'first', content: 'x', address: at(2002), reusePort: false },
    { name: 'second', content: 'x', address: at(2002), reusePort: false },
    { name: 'zeroA', content: 'x', address: at(0), reusePort: false },
    { name: 'zeroB', content: 'x', address: at(0), reusePort: false },
  ];
  const names = new Set([...candidates.map((c) => c.name), 'kept']);
  const plan = planListenerUpdate(statics, serving, names, candidates);
  assert.deepEqual(plan.added.map((c) => c.name), ['first', 'zeroA', 'zeroB']);
  assert.deepEqual(plan.removed, []);
  assert.deepEqual(plan.errors, [
    { name: 'static', reason: "cannot add or update listener 'static': a static listener has that name" },
    { name: 'onStatic', reason: "error adding listener: 'onStatic' has duplicate address '127.0.0.1:2000' as existing listener 'static'" },
    { name: 'onKept', reason: "error adding listener: 'onKept' has duplicate address '127.0.0.1:2001' as existing listener 'kept'" },
    { name: 'second', reason: "error adding listener: 'second' has duplicate address '127.0.0.1:2002' as existing listener 'first'" },
  ]);
});

test('a listener may take the address of one the same update removes', () => {
  const serving = current({ name: 'old', content: 'o', address: at(3000), reusePort: false });
  const candidates = [{ name: 'new', content: 'n', address: at(3000), reusePort: false }];
  const plan = planListenerUpdate([], serving, new Set(['new']), candidates);
  assert.deepEqual(plan.removed, ['old']);
  assert.deepEqual(plan.added.map((c) => c.name), ['new']);
});

test('a change of reuse_port is refused: the sockets stay as they were bound', () => {
  const serving = current({ name: 'l', content: 'old', address: at(4000), reusePort: false });
  const candidates = [{ name: 'l', content: 'new', address: at(4000), reusePort: true }];
  const plan = planListenerUpdate([], serving, new Set(['l']), candidates);
  assert.deepEqual(plan.modified, []);
  assert.deepEqual(plan.errors, [{ name: 'l', reason: "error updating listener: 'l' has a different reuse_port (true) from existing listener; remove it, then add it" }]);
});

test("a change of filter chains alone keeps the unchanged chains (Envoy's in-place update); any other change keeps none", () => {
  const chain = (cluster: string) => ({ filters: [{ name: 'hcm', typed_config: { cluster } }] });
  const before = { name: 'l', address: { port: 1 }, filter_chains: [chain('a'), chain('b'), chain('c')] };
  assert.deepEqual(keptFilterChains(before, { ...before, filter_chains: [chain('c'), chain('a'), chain('x')] }), [
    { previous: 0, next: 1 },
    { previous: 2, next: 0 },
  ]);
  assert.deepEqual(keptFilterChains(before, { ...before, filter_chains: [chain('a')] }), [{ previous: 0, next: 0 }]);
  assert.deepEqual(keptFilterChains(before, { ...before, per_connection_buffer_limit_bytes: 1 }), []);
  assert.equal(keptFilterChains(before, before).length, 3);
});
