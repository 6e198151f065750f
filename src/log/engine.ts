import pino, { type Logger as PinoLogger } from 'pino';
import type { Severity } from './level';
import type { LineFormat, LogRecord } from './pattern';

export type Destination = ReturnType<typeof pino.destination>;

/** A pino logger whose levels are spdlog's. */
export type Engine = PinoLogger<Severity>;

/**
 * pino's levels replaced by spdlog's, names and order. This also keeps pino's `fatal` out: it
 * flushes synchronously, which puts a line ahead of the lines whose write is still in flight.
 */
const LEVEL_VALUES: Readonly<Record<Severity, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warning: 40,
  error: 50,
  critical: 60,
};

/**
 * The pino logger every Logger is a child of. pino remains the engine (levels, child loggers,
 * the asynchronous sonic-boom destination and its flush at exit) while the line itself is ours:
 * pino's serializer, the `asJsonSym` method pino exposes to integrators, is replaced by the
 * compiled pattern. Each call's LogRecord reaches it as pino's merging object, so no JSON is
 * built, and none is parsed back.
 */
export function createEngine(destination: Destination, format: LineFormat): Engine {
  const engine = pino<Severity, true>(
    {
      customLevels: LEVEL_VALUES,
      useOnlyCustomLevels: true,
      level: 'trace',
      base: null,
      timestamp: false,
    },
    destination,
  );
  const serialize = (record: LogRecord): string => format.format(record);
  // Child loggers are created with Object.create(parent), so they all inherit this.
  Object.defineProperty(engine, pino.symbols.asJsonSym, { value: serialize });
  return engine;
}
