// The logging part of the command line as plain data: the supervisor builds it once and sends
// it to every worker, and each process opens its own LogManager from it.

import type { ComponentName } from './components';
import { isComponentName } from './components';
import type { LogLevel } from './level';
import type { LoggerFactory } from './logger_api';
import { LogManager } from './log_manager';
import { compilePattern, withLocationPrefix } from './pattern';

export interface LogSettings {
  readonly level: LogLevel;
  readonly componentLevels: readonly (readonly [ComponentName, LogLevel])[];
  readonly format: string;
  readonly prefixWithLocation: boolean;
  readonly escaped: boolean;
  /** Empty: stderr. */
  readonly path: string;
  readonly fineGrain: boolean;
}

/** %t is the process's thread id: one JS thread per process, so each worker logs its own. */
export function openLogs(s: LogSettings, threadId: number): Promise<LogManager> {
  const pattern = s.prefixWithLocation ? withLocationPrefix(s.format) : s.format;
  return LogManager.open({
    level: s.level,
    componentLevels: new Map(s.componentLevels),
    format: compilePattern(pattern, { threadId, processId: process.pid, escaped: s.escaped }),
    path: s.path === '' ? null : s.path,
    fineGrain: s.fineGrain,
  });
}

/** Component loggers by name; a name outside Envoy's registry logs as `misc`. */
export function loggerFactory(logs: LogManager): LoggerFactory {
  return (component) => logs.component(isComponentName(component) ? component : 'misc');
}
