// Whether the connection that carries the current HTTP response should close after it.
// Hot restart's drain manager answers true more and more often as the drain time elapses.

export interface DrainDecider {
  /** Consulted once per HTTP response; true adds `connection: close` and closes after it. */
  drainClose(): boolean;
}

export const neverDrain: DrainDecider = { drainClose: () => false };

/** A listener's own drain besides the process's: either one closes the connection. */
export function eitherDrains(first: DrainDecider, second: DrainDecider): DrainDecider {
  return { drainClose: () => first.drainClose() || second.drainClose() };
}
