// Envoy's JitteredBackOffStrategy: the n-th delay is drawn uniformly below (2^n - 1) x base,
// the range growing until it passes `maxMs`, and no delay exceeds `maxMs`.

import type { RandomSource } from './random';

export class JitteredBackOff {
  private attempt = 1;

  /** @param baseMs at least 1 */
  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
    private readonly random: RandomSource,
  ) {}

  /** The delay before the next retry, in milliseconds. */
  nextMs(): number {
    const range = (2 ** this.attempt - 1) * this.baseMs;
    if (range <= this.maxMs) this.attempt++;
    return Math.min(this.random() % range, this.maxMs);
  }

  /** Back to the first delay's range, after a success. */
  reset(): void {
    this.attempt = 1;
  }
}
