// Ctrl-C during a load benchmark: the first one stops what the benchmark started and lets the
// run unwind through its cleanup; a second one kills at once and exits.

import { constants } from 'node:os';
import type { ProcessGroups } from './process_group';

export class InterruptedError extends Error {
  override readonly name = 'InterruptedError';

  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
  }
}

/**
 * The first Ctrl-C (or SIGTERM) stops the processes gracefully, which cuts the running wrk
 * short, and aborts the returned signal; a second one kills at once and exits.
 */
export function onInterrupt(processes: ProcessGroups): AbortSignal {
  const interruption = new AbortController();
  const interrupt = (signal: NodeJS.Signals): void => {
    if (interruption.signal.aborted) {
      processes.killAllNow();
      process.exit(128 + constants.signals[signal]);
    }
    console.error(`\ninterrupted by ${signal}; stopping every process the benchmark started`);
    interruption.abort(new InterruptedError(signal));
    void processes.stopAll();
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  // Covers exits no one planned, such as an uncaught exception.
  process.once('exit', () => processes.killAllNow());
  return interruption.signal;
}

/** Sets the exit status from `main`: its result, 128 + the signal when interrupted, 1 on an error. */
export function runMain(name: string, main: () => Promise<number>): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      if (error instanceof InterruptedError) {
        process.exitCode = 128 + constants.signals[error.signal];
        return;
      }
      console.error(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  );
}
