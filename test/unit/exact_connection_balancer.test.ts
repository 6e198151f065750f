// exact_balance's pick: the worker holding the fewest connections, this worker on a tie (so that
// nothing is passed on for nothing), the lowest index among others tied below it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leastLoaded } from '../../src/listener/exact_connection_balancer';

test('the worker with the fewest connections; this one when it ties for fewest', () => {
  assert.equal(leastLoaded([3, 2], 0), 1);
  assert.equal(leastLoaded([2, 3], 1), 0);
  assert.equal(leastLoaded([2, 2], 0), 0);
  assert.equal(leastLoaded([2, 2], 1), 1);
  assert.equal(leastLoaded([5, 1, 1, 4], 3), 1);
  assert.equal(leastLoaded([5, 1, 1, 4], 2), 2);
  assert.equal(leastLoaded([0], 0), 0);
});
