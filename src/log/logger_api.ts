// The logger shape the data plane writes to. The logging subsystem (log_manager.ts) hands out
// objects of this shape; the data plane never depends on how lines are formatted or stored.

import type { Severity } from './level';

export interface Logger {
  /** Guards messages that cost something to build: `if (log.enabled('debug')) log.debug(...)`. */
  enabled(level: Severity): boolean;
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  critical(message: string): void;
  /**
   * The logger of the lines module `filename` (its `__filename`) writes: with fine-grain logging
   * that source file's own, otherwise this very logger. A module asks once, where it takes its
   * logger, never per line.
   */
  forFile(filename: string): Logger;
}

/** Returns the logger of a component such as `connection`, `http`, `router`, `pool`, `upstream`. */
export type LoggerFactory = (component: string) => Logger;
