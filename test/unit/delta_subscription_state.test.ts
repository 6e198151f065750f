// DeltaSubscriptionState, the delta client's bookkeeping for one type: the interest each request
// states, the set a response makes, and what each watch is handed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeltaSubscriptionState, watchResources } from '../../src/config/xds/delta_subscription_state';
import type { DecodedResource } from '../../src/config/xds/subscription';

const entry = (name: string, version: string, i = 0) => ({ name, version, path: `resources[${i}].resource` });
const decoded = (name: string, port = 1): DecodedResource => ({ name, resource: { cluster_name: name, port } });

test('interest: a first request names everything wanted; later ones the changes; removed-then-added counts as added', () => {
  const state = new DeltaSubscriptionState();
  state.setInterest(false, new Set(['a', 'b']));
  assert.ok(state.requestPending());
  const first = state.nextRequest();
  assert.deepEqual([...first.resourceNamesSubscribe].sort(), ['a', 'b']);
  assert.deepEqual(first.resourceNamesUnsubscribe, []);
  assert.equal(state.requestPending(), false);

  state.setInterest(false, new Set(['a']));
  state.setInterest(false, new Set(['a', 'b', 'c']));
  assert.deepEqual(state.nextRequest(), { resourceNamesSubscribe: ['b', 'c'], resourceNamesUnsubscribe: [], initialResourceVersions: new Map() });
  state.setInterest(false, new Set(['c']));
  assert.deepEqual(state.nextRequest(), { resourceNamesSubscribe: [], resourceNamesUnsubscribe: ['a', 'b'], initialResourceVersions: new Map() });
});

test('a wildcard type subscribes with no names, and restates what it holds on a new stream', () => {
  const state = new DeltaSubscriptionState();
  state.setInterest(true, new Set());
  assert.deepEqual(state.nextRequest().resourceNamesSubscribe, []);
  const update = state.apply([entry('x', 'v1', 0), entry('y', 'v2', 1)], [decoded('x'), decoded('y')], []);
  state.commit(update);
  assert.equal(state.requestPending(), false);
  state.streamOpened();
  assert.ok(state.requestPending());
  assert.deepEqual(state.nextRequest(), {
    resourceNamesSubscribe: [],
    resourceNamesUnsubscribe: [],
    initialResourceVersions: new Map([
      ['x', 'v1'],
      ['y', 'v2'],
    ]),
  });
});

test('apply: additions and removals over the held set; unwanted resources left out; nothing held until commit', () => {
  const state = new DeltaSubscriptionState();
  state.setInterest(false, new Set(['a', 'b']));
  state.nextRequest();
  state.commit(state.apply([entry('a', '1', 0), entry('b', '1', 1), entry('z', '1', 2)], [decoded('a'), decoded('b'), decoded('z')], []));

  const update = state.apply([entry('a', '2', 0)], [decoded('a', 2)], ['b']);
  assert.deepEqual([...update.resources.keys()], ['a']);
  assert.deepEqual(update.resources.get('a'), { name: 'a', resource: { cluster_name: 'a', port: 2 }, version: '2', path: 'resources[0].resource' });
  assert.deepEqual(watchResources(update, ['b']), []);
  assert.equal(watchResources(update, ['c']), null);
  assert.equal(watchResources(update, [])?.length, 1);

  // Not committed (rejected): a new stream still states the versions held before.
  state.streamOpened();
  assert.deepEqual(
    state.nextRequest().initialResourceVersions,
    new Map([
      ['a', '1'],
      ['b', '1'],
    ]),
  );
  // Losing interest drops what was held, also from an update being applied meanwhile.
  state.setInterest(false, new Set(['a']));
  state.commit(update);
  state.streamOpened();
  assert.deepEqual(state.nextRequest().initialResourceVersions, new Map([['a', '2']]));
});
