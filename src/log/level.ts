import { InvalidLogLevelError } from './errors';

/** spdlog's level names, lowest first; `off` silences a logger. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];

/** The levels a log line can carry. */
export type Severity = Exclude<LogLevel, 'off'>;

export function isLogLevel(text: string): text is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(text);
}

/** A level as written in --component-log-level and the admin /logging endpoint. */
export function parseLogLevel(text: string): LogLevel {
  if (!isLogLevel(text)) throw new InvalidLogLevelError(text);
  return text;
}

/** The -l/--log-level value: Envoy also accepts the legacy `warn` there, and only there. */
export function parseLogLevelOption(text: string): LogLevel {
  return text === 'warn' ? 'warning' : parseLogLevel(text);
}
