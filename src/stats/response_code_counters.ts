// Envoy's chargeBasicResponseStat under one scope: upstream_rq_completed, upstream_rq_<N>xx and
// upstream_rq_<code>, each made on its first use as Envoy makes them, then kept.

import type { Counter, Scope } from './stats';

export class ResponseCodeCounters {
  /** upstream_rq_1xx .. upstream_rq_5xx by the code's first digit. */
  private readonly classes: Counter[] = [];
  private readonly codes: Counter[] = [];

  /** @param completed upstream_rq_completed when the owner has it already; else made on first use */
  constructor(
    private readonly scope: Scope,
    private completed: Counter | null = null,
  ) {}

  charge(code: number): void {
    (this.completed ??= this.scope.counter('upstream_rq_completed')).inc();
    const digit = Math.floor(code / 100);
    if (digit >= 1 && digit <= 5) (this.classes[digit] ??= this.scope.counter(`upstream_rq_${digit}xx`)).inc();
    (this.codes[code] ??= this.scope.counter(`upstream_rq_${code}`)).inc();
  }
}
