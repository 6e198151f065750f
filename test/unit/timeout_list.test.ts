import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TimeoutList, type TimeoutListMember } from '../../src/common/timeout_list';
import { ManualClock } from '../helpers/manual_clock';

class Member implements TimeoutListMember {
  timeoutPrev: TimeoutListMember | null = null;
  timeoutNext: TimeoutListMember | null = null;
  timeoutDeadline = -1;
  constructor(readonly name: string) {}
}

function list(clock: ManualClock, delayMs: number): { list: TimeoutList<Member>; expired: string[] } {
  const expired: string[] = [];
  return { list: new TimeoutList<Member>(clock, delayMs, (m) => expired.push(`${m.name}@${clock.now()}`)), expired };
}

test('members run out in the order armed, each its delay after its own arming, on one timer', () => {
  const clock = new ManualClock();
  const { list: timeouts, expired } = list(clock, 100);
  const a = new Member('a');
  const b = new Member('b');
  const c = new Member('c');
  timeouts.arm(a);
  clock.advance(30);
  timeouts.arm(b);
  clock.advance(30);
  timeouts.arm(c);
  assert.equal(clock.pending, 1);
  clock.advance(39);
  assert.deepEqual(expired, []);
  clock.advance(1);
  assert.deepEqual(expired, ['a@100']);
  clock.advance(100);
  assert.deepEqual(expired, ['a@100', 'b@130', 'c@160']);
  assert.equal(a.timeoutDeadline, -1);
  assert.equal(c.timeoutNext, null);
});

test('arming again moves a member to the back with a new deadline; a disarmed one never runs out', () => {
  const clock = new ManualClock();
  const { list: timeouts, expired } = list(clock, 100);
  const a = new Member('a');
  const b = new Member('b');
  const c = new Member('c');
  timeouts.arm(a);
  timeouts.arm(b);
  timeouts.arm(c);
  clock.advance(50);
  timeouts.arm(a);
  timeouts.disarm(b);
  timeouts.disarm(b);
  clock.advance(100);
  assert.deepEqual(expired, ['c@100', 'a@150']);
  // Emptied, the list arms its timer again for the next member.
  timeouts.arm(b);
  clock.advance(100);
  assert.deepEqual(expired, ['c@100', 'a@150', 'b@250']);
});

test('a member armed from inside a timeout waits its whole delay', () => {
  const clock = new ManualClock();
  const expired: string[] = [];
  const late = new Member('late');
  const timeouts: TimeoutList<Member> = new TimeoutList<Member>(clock, 10, (m) => {
    expired.push(`${m.name}@${clock.now()}`);
    if (m.name === 'first') timeouts.arm(late);
  });
  timeouts.arm(new Member('first'));
  clock.advance(15);
  assert.deepEqual(expired, ['first@10']);
  clock.advance(5);
  assert.deepEqual(expired, ['first@10', 'late@20']);
});
