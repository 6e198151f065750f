// One host's round of checks (Envoy's ActiveHealthCheckSession): the first check at once (or
// after initial_jitter), each bounded by the timeout, which counts as a network failure; after
// each outcome the owner judges it and says when the next one runs.

import type { Clock, TimeoutHandle } from '../../../common/clock';
import type { SocketAddress } from '../../../config/model';
import { type HealthProbe, NETWORK_FAILURE, type ProbeTarget } from './health_probe';
import { type CheckOutcome, INITIAL_COUNTS, type VerdictCounts } from './verdict';

export interface SessionOwner {
  /** The delay before a session's first check. */
  initialDelay(): number;
  /** A check starts. */
  onAttempt(): void;
  /** Judges a check's outcome; returns the delay until the next check. */
  onOutcome(session: HealthCheckSession, outcome: CheckOutcome): number;
}

export class HealthCheckSession {
  /** The host's active health check bits, as this checker last set them. */
  flags: number;
  counts: VerdictCounts = INITIAL_COUNTS;
  private timer: TimeoutHandle | null = null;
  private timeout: TimeoutHandle | null = null;
  private closed = false;

  constructor(
    readonly key: string,
    public target: ProbeTarget,
    flags: number,
    private probe: HealthProbe,
    private readonly clock: Clock,
    private readonly timeoutMs: number,
    private readonly owner: SessionOwner,
  ) {
    this.flags = flags;
  }

  start(): void {
    const delay = this.owner.initialDelay();
    if (delay === 0) this.run();
    else this.schedule(delay);
  }

  get address(): SocketAddress {
    return this.target.address;
  }

  /**
   * The host's address changed (a LOGICAL_DNS host follows DNS), or its metadata picks another
   * transport socket: later checks go the new way.
   */
  retarget(target: ProbeTarget, probe: HealthProbe): void {
    this.target = target;
    this.probe.close();
    this.probe = probe;
    // A check in flight went the old way: it starts again the new one.
    if (this.timeout !== null) {
      this.clock.clearTimeout(this.timeout);
      this.run();
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    if (this.timeout !== null) this.clock.clearTimeout(this.timeout);
    this.timer = this.timeout = null;
    this.probe.close();
  }

  private schedule(delayMs: number): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.run();
    }, delayMs);
  }

  private run(): void {
    this.timeout = this.clock.setTimeout(() => {
      this.timeout = null;
      this.probe.abort();
      this.onDone(NETWORK_FAILURE);
    }, this.timeoutMs);
    this.owner.onAttempt();
    this.probe.check((outcome) => this.onDone(outcome));
  }

  private onDone(outcome: CheckOutcome): void {
    if (this.closed) return;
    if (this.timeout !== null) this.clock.clearTimeout(this.timeout);
    this.timeout = null;
    const delay = this.owner.onOutcome(this, outcome);
    if (!this.closed) this.schedule(delay);
  }
}
