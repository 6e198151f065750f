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
  /** Fine-grain logging's per-file rules (`[glob, level]`), applied in order over `level`. */
  readonly fileLevels: readonly (readonly [string, LogLevel])[];
  readonly format: string;
  readonly prefixWithLocation: boolean;
  readonly escaped: boolean;
  /** Empty: stderr. */
  readonly path: string;
  readonly fineGrain: boolean;
}

/** %t is the process's thread id: one JS thread per process, so each worker logs its own. */
export async function openLogs(s: LogSettings, threadId: number): Promise<LogManager> {
  const pattern = s.prefixWithLocation ? withLocationPrefix(s.format) : s.format;
  const logs = await LogManager.open({
    level: s.level,
    componentLevels: new Map(s.componentLevels),
    format: compilePattern(pattern, { threadId, processId: process.pid, escaped: s.escaped }),
    path: s.path === '' ? null : s.path,
    fineGrain: s.fineGrain,
  });
  for (const [glob, level] of s.fileLevels) logs.setFileLevel(glob, level);
  return logs;
}

/**
 * Component loggers by name; a name outside Envoy's registry logs as `misc`. With fine-grain
 * logging, each module that writes lines takes its own file's logger from the one it is handed
 * (`log.forFile(__filename)`), as Envoy's per-file loggers belong to the file whose macro writes.
 */
export function loggerFactory(logs: LogManager): LoggerFactory {
  return (component) => logs.component(isComponentName(component) ? component : 'misc');
}
