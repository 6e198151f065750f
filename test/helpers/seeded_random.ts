// Reproducible random numbers for tests that generate data: the same seed gives the same
// sequence on every run and machine, so a failure can be replayed.

/** Uniform in [0, 1), from a 32-bit seed (the mulberry32 generator). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Normally distributed, by the Box-Muller transform. */
export function normalSample(random: () => number, mean: number, sd: number): number {
  return mean + sd * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Exponentially distributed, by inversion. */
export function exponentialSample(random: () => number, mean: number): number {
  return -mean * Math.log(1 - random());
}
