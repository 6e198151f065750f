// What the router and tcp_proxy ask of a cluster's load balancer.

import type { Host } from '../host';

export interface LoadBalancer {
  /** The host for the next request or connection; null when there is none to use. */
  chooseHost(): Host | null;
  /** Rebuilds the balancer's state after the priority set's membership or health changed. */
  refresh(): void;
}

/** A source of uniformly distributed unsigned 32-bit integers. */
export type RandomSource = () => number;

export const mathRandom: RandomSource = () => Math.floor(Math.random() * 0x100000000);
