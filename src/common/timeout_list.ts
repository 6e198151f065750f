// Many objects' timeouts of one same delay on a single Timer: the connections of one connection
// manager and their idle_timeout. Since every deadline is the same delay from its arming, a FIFO
// linked through the members themselves stays in deadline order, and an idle connection holds
// three fields instead of a Timer and a Node timer of its own.

import type { Clock, Timer } from './clock';

/** The fields a TimeoutList links its members by; only the list writes them. */
export interface TimeoutListMember {
  timeoutPrev: TimeoutListMember | null;
  timeoutNext: TimeoutListMember | null;
  /** When it runs out, on the clock's eventNow(); -1 when not in any list. */
  timeoutDeadline: number;
}

export class TimeoutList<T extends TimeoutListMember> {
  private head: T | null = null;
  private tail: T | null = null;
  private readonly timer: Timer;

  /** `onTimeout` is called for a member whose delay ran out, already out of the list. */
  constructor(
    private readonly clock: Clock,
    private readonly delayMs: number,
    private readonly onTimeout: (member: T) => void,
  ) {
    this.timer = clock.createTimer(this.onTimer);
  }

  /** `member` runs out `delayMs` from now, in place of any earlier arming. */
  arm(member: T): void {
    if (member.timeoutDeadline >= 0) this.unlink(member);
    member.timeoutDeadline = this.clock.eventNow() + this.delayMs;
    member.timeoutPrev = this.tail;
    if (this.tail === null) this.head = member;
    else this.tail.timeoutNext = member;
    this.tail = member;
    // The timer, if enabled, fires for an earlier member and is then moved on to the next.
    if (!this.timer.enabled) this.timer.enable(this.delayMs);
  }

  /** `member` will not run out unless armed again. */
  disarm(member: T): void {
    if (member.timeoutDeadline >= 0) this.unlink(member);
  }

  private unlink(member: T): void {
    const prev = member.timeoutPrev as T | null;
    const next = member.timeoutNext as T | null;
    if (prev === null) this.head = next;
    else prev.timeoutNext = next;
    if (next === null) this.tail = prev;
    else next.timeoutPrev = prev;
    member.timeoutPrev = member.timeoutNext = null;
    member.timeoutDeadline = -1;
  }

  private readonly onTimer = (): void => {
    // As a Timer, due within a millisecond of its deadline: Node's timers keep whole milliseconds.
    const due = this.clock.eventNow() + 1;
    let member = this.head;
    while (member !== null && member.timeoutDeadline <= due) {
      this.unlink(member);
      this.onTimeout(member);
      member = this.head;
    }
    if (member !== null) this.timer.enable(member.timeoutDeadline - this.clock.eventNow());
  };
}
