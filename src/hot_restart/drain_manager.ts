// Envoy's drain manager (source/server/drain_manager_impl.cc): once a drain sequence starts,
// whether each response should close its connection. `immediate` closes every one; `gradual`
// closes a share that grows from 0 to 100% over --drain-time-s, so clients move to the new
// epoch gradually instead of all reconnecting at once.

import { type Clock, SystemClock, type TimeoutHandle } from '../common/clock';
import type { DrainDecider } from '../server/drain_decider';

export type DrainStrategy = 'gradual' | 'immediate';

export interface DrainManagerOptions {
  readonly strategy: DrainStrategy;
  /** --drain-time-s. */
  readonly drainTimeS: number;
  /** Times the drain (its deadline and the completion callback); the system clock by default. */
  readonly clock?: Clock;
  /** A uniform non-negative integer per call (Envoy's random()). */
  readonly random?: () => number;
  /**
   * The server's /healthcheck/fail state: while it holds, every response closes its connection,
   * draining or not (Envoy's rule for listeners of the DEFAULT drain type, ours all are).
   */
  readonly healthCheckFailed?: () => boolean;
}

/**
 * Envoy's gradual answer at one instant: true with probability elapsed / drain time, counted in
 * whole seconds (the remaining time truncated), and always once the deadline has passed.
 */
export function gradualDrainClose(drainTimeS: number, remainingMs: number, randomValue: number): boolean {
  if (remainingMs <= 0) return true;
  const elapsedS = drainTimeS - Math.floor(remainingMs / 1000);
  return elapsedS > randomValue % drainTimeS;
}

export class DrainManager implements DrainDecider {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly healthCheckFailed: () => boolean;
  private deadlineMs: number | null = null;
  private timer: TimeoutHandle | null = null;

  constructor(private readonly options: DrainManagerOptions) {
    this.clock = options.clock ?? new SystemClock();
    this.random = options.random ?? (() => Math.floor(Math.random() * 0x1_0000_0000));
    this.healthCheckFailed = options.healthCheckFailed ?? (() => false);
  }

  get draining(): boolean {
    return this.deadlineMs !== null;
  }

  drainClose(): boolean {
    if (this.healthCheckFailed()) return true;
    if (this.deadlineMs === null) return false;
    if (this.options.strategy === 'immediate') return true;
    return gradualDrainClose(this.options.drainTimeS, this.deadlineMs - this.clock.now(), this.random());
  }

  /**
   * Starts draining now; `onComplete` runs when the drain time is over. The timer does not keep
   * the process alive: a drain only matters while something else does.
   */
  startDrainSequence(onComplete: () => void = () => {}): void {
    if (this.deadlineMs !== null) throw new Error('the drain sequence has already started');
    const drainMs = this.options.drainTimeS * 1000;
    this.deadlineMs = this.clock.now() + drainMs;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      onComplete();
    }, drainMs);
  }

  /** Cancels the completion callback (the process is shutting down). */
  close(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
