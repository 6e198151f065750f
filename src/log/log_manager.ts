import { once } from 'node:events';
import { open } from 'node:fs/promises';
import { CREATED_FILE_MODE } from '../common/file_mode';
import pino from 'pino';
import { HighResolutionClock } from './clock';
import { COMPONENT_NAMES, type ComponentName } from './components';
import { createEngine, type Destination, type Engine } from './engine';
import { FileLevelRules, globMatcher } from './file_levels';
import type { LogLevel } from './level';
import { Logger, type LoggerContext } from './logger';
import type { LineFormat } from './pattern';
import { PACKAGE_ROOT, SourceLocator, sourcePath } from './source_location';

export interface LogManagerOptions {
  /** -l/--log-level: every logger's level, and the default of fine-grain file loggers. */
  readonly level: LogLevel;
  /** --component-log-level, applied over `level`. */
  readonly componentLevels: ReadonlyMap<ComponentName, LogLevel>;
  /** The compiled --log-format (see compilePattern and withLocationPrefix). */
  readonly format: LineFormat;
  /** --log-path; null writes to stderr. */
  readonly path: string | null;
  /** --enable-fine-grain-logging: a logger's `forFile` hands out per-file loggers. */
  readonly fineGrain: boolean;
}

/** One row of GET /logging. */
export interface LoggerLevel {
  readonly name: string;
  readonly level: LogLevel;
}

const STDERR_FD = 2;

/**
 * The process's loggers and their one output. Lines are written asynchronously (sonic-boom)
 * and whatever is still buffered is written out when the process exits.
 */
export class LogManager {
  readonly path: string | null;
  readonly fineGrain: boolean;
  private readonly components: ReadonlyMap<ComponentName, Logger>;
  /** File loggers by shown path, in the order they were created. */
  private readonly files = new Map<string, Logger>();
  /** The same loggers by the `__filename` that asked, so that asking again costs one lookup. */
  private readonly filesByModule = new Map<string, Logger>();
  private readonly fileRules = new FileLevelRules();
  private readonly engine: Engine;
  private readonly context: LoggerContext;
  /** The level of file loggers no rule matches. */
  private fileDefaultLevel: LogLevel;
  /** pino re-emits an output error it does not handle itself; it is reported once. */
  private lastOutputError: Error | undefined;

  /** Resolves once the output is open, so that even a line logged just before exit is kept. */
  static async open(options: LogManagerOptions): Promise<LogManager> {
    if (options.path !== null) {
      // sonic-boom cannot be abandoned after a failed open (its exit hook would throw), so the
      // path is tried first: a bad --log-path rejects here, with the file system's error.
      await (await open(options.path, 'a', CREATED_FILE_MODE)).close();
    }
    const destination = pino.destination({ dest: options.path ?? STDERR_FD, sync: false, mode: CREATED_FILE_MODE });
    await once(destination, 'ready');
    return new LogManager(options, destination);
  }

  private constructor(
    options: LogManagerOptions,
    private readonly destination: Destination,
  ) {
    this.path = options.path;
    this.fineGrain = options.fineGrain;
    this.fileDefaultLevel = options.level;
    destination.on('error', (error: Error) => this.reportOutputError(error));
    this.engine = createEngine(destination, options.format);
    this.context = {
      clock: new HighResolutionClock(),
      locator: options.format.usesLocation ? new SourceLocator(PACKAGE_ROOT) : null,
      files: options.fineGrain ? (filename) => this.forFile(filename) : null,
    };
    this.components = new Map(
      COMPONENT_NAMES.map((name) => {
        const level = options.componentLevels.get(name) ?? options.level;
        return [name, this.newLogger(name, level)];
      }),
    );
  }

  /** The level of loggers made from now on that no rule names: -l, or the latest setLevel. */
  get defaultLevel(): LogLevel {
    return this.fileDefaultLevel;
  }

  component(name: ComponentName): Logger {
    // The map holds every ComponentName.
    return this.components.get(name)!;
  }

  /** The per-file logger of `filename` (a module's `__filename`), named by its source path. */
  forFile(filename: string): Logger {
    let logger = this.filesByModule.get(filename);
    if (logger !== undefined) return logger;
    const name = sourcePath(filename, PACKAGE_ROOT);
    logger = this.files.get(name);
    if (logger === undefined) {
      logger = this.newLogger(name, this.fileRules.levelFor(name) ?? this.fileDefaultLevel);
      this.files.set(name, logger);
    }
    this.filesByModule.set(filename, logger);
    return logger;
  }

  /** Sets every logger, present and future; earlier per-file rules are forgotten. */
  setLevel(level: LogLevel): void {
    for (const logger of this.components.values()) logger.setLevel(level);
    for (const logger of this.files.values()) logger.setLevel(level);
    this.fileRules.clear();
    this.fileDefaultLevel = level;
  }

  setComponentLevel(name: ComponentName, level: LogLevel): void {
    this.component(name).setLevel(level);
  }

  /**
   * Sets the file loggers whose path matches `glob` (`*` within a segment, `**` across them),
   * now and when later created. Returns how many existing file loggers it matched.
   */
  setFileLevel(glob: string, level: LogLevel): number {
    this.fileRules.set(glob, level);
    const matcher = globMatcher(glob);
    let matched = 0;
    for (const [name, logger] of this.files) {
      if (!matcher.test(name)) continue;
      logger.setLevel(level);
      matched++;
    }
    return matched;
  }

  /** The per-file rules setFileLevel made since the last setLevel, oldest first: `[glob, level]`. */
  fileLevelRules(): [glob: string, level: LogLevel][] {
    return this.fileRules.entries();
  }

  /** Component loggers in registry order, as GET /logging lists them. */
  componentLevels(): LoggerLevel[] {
    return [...this.components.values()].map(levelOf);
  }

  /** File loggers in the order they were created. */
  fileLevels(): LoggerLevel[] {
    return [...this.files.values()].map(levelOf);
  }

  /**
   * Reopens --log-path (SIGUSR1): after logrotate moved the file away, later lines go to a new
   * file at the same path. Resolves once it is open; logging to stderr has nothing to reopen.
   */
  async reopen(): Promise<void> {
    if (this.path === null) return;
    const reopened = once(this.destination, 'ready');
    this.destination.reopen();
    await reopened;
  }

  /**
   * Resolves once every line logged so far is written; exit after it. sonic-boom's exit hook
   * writes what is buffered synchronously while an asynchronous write may still be in flight,
   * which can put a line ahead of an earlier one or lose it. (Its flush() does nothing with
   * minLength 0, and whether a write is in flight is visible only as `_writing`.)
   */
  async flush(): Promise<void> {
    const destination = this.destination as Destination & { readonly _writing: boolean };
    if (destination._writing) await once(destination, 'drain');
  }

  private newLogger(name: string, level: LogLevel): Logger {
    return new Logger(name, level, this.engine, this.context);
  }

  /**
   * A failing log file must not take the proxy down, and stderr is the one place left to say
   * so; when stderr itself is the output that fails, there is nowhere to report it.
   */
  private reportOutputError(error: Error): void {
    if (this.path === null || error === this.lastOutputError) return;
    this.lastOutputError = error;
    process.stderr.write(`cannot write log file '${this.path}': ${error.message}\n`);
  }
}

function levelOf(logger: Logger): LoggerLevel {
  return { name: logger.name, level: logger.level };
}
