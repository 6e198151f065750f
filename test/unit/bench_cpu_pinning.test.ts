import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CpuListError, parseCpuList, pinnedTo, planPinning } from '../../bench/cpu_pinning';

test('parses the kernel CPU list notation', () => {
  assert.deepEqual(parseCpuList('0-1'), [0, 1]);
  assert.deepEqual(parseCpuList('2,4-6,9\n'), [2, 4, 5, 6, 9]);
  assert.throws(() => parseCpuList('0-'), CpuListError);
  assert.throws(() => parseCpuList(''), CpuListError);
});

test('the proxy gets the first allowed CPU, the load the second; one CPU pins nothing', () => {
  assert.deepEqual(planPinning([2, 5, 7]), { proxyCpu: 2, loadCpu: 5 });
  assert.equal(planPinning([0]), null);
});

test('pinning wraps the command in taskset, no pinning leaves it alone', () => {
  assert.deepEqual(pinnedTo(1, 'wrk', ['-c50']), { command: 'taskset', args: ['-c', '1', 'wrk', '-c50'] });
  assert.deepEqual(pinnedTo(null, 'wrk', ['-c50']), { command: 'wrk', args: ['-c50'] });
});
