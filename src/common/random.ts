// The randomness the data plane draws on (load balancing, retry jitter, health check jitter,
// runtime fractions), injected so that tests can replay a sequence.

/** A source of uniformly distributed unsigned 32-bit integers. */
export type RandomSource = () => number;

export const mathRandom: RandomSource = () => Math.floor(Math.random() * 0x100000000);
