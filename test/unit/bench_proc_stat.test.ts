import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProcStat, ProcStatError, processTree, type ProcStat } from '../../bench/proc_cpu';

// Fields 14-17 (utime stime cutime cstime) are 120 30 7 3.
const NGINX_WORKER =
  '5860 (nginx) S 5858 5858 5858 0 -1 4194624 1103 0 0 0 120 30 7 3 20 0 1 0 2403 58232832 1442 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0';

test('sums user, system and reaped-children time of a stat line', () => {
  assert.deepEqual(parseProcStat(NGINX_WORKER), { pid: 5860, ppid: 5858, cpuTicks: 160 });
});

test('a command name with spaces and parentheses does not shift the fields', () => {
  const line = NGINX_WORKER.replace('(nginx)', '(node (worker) 1)');
  assert.deepEqual(parseProcStat(line), { pid: 5860, ppid: 5858, cpuTicks: 160 });
});

test('a truncated or malformed line is an error', () => {
  assert.throws(() => parseProcStat('5860 (nginx) S 5858 5858'), ProcStatError);
  assert.throws(() => parseProcStat('no parentheses here'), ProcStatError);
});

test('the tree holds the root and every descendant, and nothing else', () => {
  const stat = (pid: number, ppid: number): ProcStat => ({ pid, ppid, cpuTicks: pid });
  const all = [stat(1, 0), stat(10, 1), stat(11, 10), stat(12, 10), stat(13, 12), stat(20, 1), stat(21, 20)];
  assert.deepEqual(
    processTree(10, all).map((entry) => entry.pid).sort((a, b) => a - b),
    [10, 11, 12, 13],
  );
  assert.deepEqual(processTree(13, all).map((entry) => entry.pid), [13]);
  assert.throws(() => processTree(99, all), ProcStatError);
});
