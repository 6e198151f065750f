import type { HighResolutionClock } from './clock';
import type { Engine } from './engine';
import type { LogLevel, Severity } from './level';
import type { LogRecord } from './pattern';
import type { SourceLocator } from './source_location';

/** What every logger of one LogManager shares. */
export interface LoggerContext {
  readonly clock: HighResolutionClock;
  /** Null when the format prints no source location, so none is ever captured. */
  readonly locator: SourceLocator | null;
  /** With fine-grain logging, the per-file loggers by `__filename`; null without it. */
  readonly files: ((filename: string) => Logger) | null;
}

/**
 * A named logger: a component such as `upstream` or, with fine-grain logging, a source file.
 * Its level lives in its pino child logger, the one place it is kept.
 */
export class Logger {
  private readonly engine: Engine;

  constructor(
    readonly name: string,
    level: LogLevel,
    root: Engine,
    private readonly context: LoggerContext,
  ) {
    this.engine = root.child({}, { level: pinoLevel(level) });
  }

  get level(): LogLevel {
    const level = this.engine.level;
    return level === 'silent' ? 'off' : (level as Severity);
  }

  setLevel(level: LogLevel): void {
    this.engine.level = pinoLevel(level);
  }

  /** Without fine-grain logging every module writes through the logger it was handed. */
  forFile(filename: string): Logger {
    return this.context.files === null ? this : this.context.files(filename);
  }

  /** For messages that are costly to build: `if (log.enabled('debug')) log.debug(dump(x))`. */
  enabled(level: Severity): boolean {
    return this.engine.isLevelEnabled(level);
  }

  trace(message: string): void {
    this.log('trace', message, this.trace);
  }

  debug(message: string): void {
    this.log('debug', message, this.debug);
  }

  info(message: string): void {
    this.log('info', message, this.info);
  }

  warn(message: string): void {
    this.log('warning', message, this.warn);
  }

  error(message: string): void {
    this.log('error', message, this.error);
  }

  critical(message: string): void {
    this.log('critical', message, this.critical);
  }

  /** `entry` is the public method called, so the location found is its caller's. */
  private log(level: Severity, message: string, entry: Function): void {
    // Nothing is timed, captured or formatted for a disabled level.
    if (!this.enabled(level)) return;
    const { seconds, nanos } = this.context.clock.now();
    const location = this.context.locator?.locate(entry) ?? null;
    const record: LogRecord = { seconds, nanos, level, logger: this.name, message, location };
    this.engine[level](record);
  }
}

/** pino calls `off` `silent`. */
function pinoLevel(level: LogLevel): Severity | 'silent' {
  return level === 'off' ? 'silent' : level;
}
