// POST /logging with --enable-fine-grain-logging (Envoy's logs handler over its fine-grain
// loggers): lists the file loggers of every process with their levels as numbers, and sets
// one by path (`?<path>=<level>`), several (`?paths=<path>:<level>,...`) or all (`?level=<level>`).
// A path that names no file logger is refused, as Envoy refuses an unknown logger name.

import { isLogLevel, LOG_LEVELS, type LogLevel } from '../log/level';
import type { LevelChange } from '../log/level_change';
import type { LoggerLevel } from '../log/log_manager';
import type { AdminHandler, AdminResponse } from './admin_server';
import { LEVELS_LINE } from './logging_handler';
import type { QueryParams } from './query';

export interface FileLoggingControl {
  /** The file loggers of the supervisor and of every worker, each path once. */
  fileLevels(): Promise<readonly LoggerLevel[]>;
  /** Makes the change here and sends it to every worker. */
  change(change: LevelChange): void;
}

export const FINE_GRAIN_LOGGING_USAGE =
  'usage: /logging?<name>=<level> (change single level)\n' +
  'usage: /logging?paths=name1:level1,name2:level2,... (change multiple levels)\n' +
  'usage: /logging?level=<level> (change all levels)\n' +
  LEVELS_LINE;

/** Envoy's listing of fine-grain loggers: three spaces, the path, and the level's number (trace 0 ... off 6). */
export function renderFileLoggers(levels: readonly LoggerLevel[]): string {
  return `active loggers:\n${levels.map((l) => `   ${l.name}: ${LOG_LEVELS.indexOf(l.level)}\n`).join('')}`;
}

/** The change a query asks for; null when it asks for none (a listing); 'invalid' otherwise. */
export function parseFileLevelChange(query: QueryParams, known: ReadonlySet<string>): LevelChange | null | 'invalid' {
  if (query.size === 0) return null;
  if (query.size !== 1) return 'invalid';
  const [[key, value]] = [...query];
  if (key === 'level') return isLogLevel(value) ? { component: null, level: value } : 'invalid';
  const files: (readonly [string, LogLevel])[] = [];
  const pairs = key === 'paths' ? value.split(',').filter((pair) => pair.trim() !== '') : [`${key}:${value}`];
  for (const pair of pairs) {
    const colon = pair.indexOf(':');
    const path = pair.slice(0, colon).trim();
    const level = pair.slice(colon + 1).trim();
    if (colon < 0 || !isLogLevel(level) || !known.has(path)) return 'invalid';
    files.push([path, level]);
  }
  return { files };
}

export function fineGrainLoggingHandler(control: FileLoggingControl): AdminHandler {
  return {
    path: '/logging',
    help: 'query/change logging levels',
    mutatesState: true,
    decodeQuery: false,
    handle: async (req): Promise<AdminResponse> => {
      const before = await control.fileLevels();
      const change = parseFileLevelChange(req.query, new Set(before.map((l) => l.name)));
      // As logging_handler.ts: 400 where Envoy answers 404, the path exists.
      if (change === 'invalid') return { status: 400, body: FINE_GRAIN_LOGGING_USAGE + renderFileLoggers(before) };
      if (change === null) return { status: 200, body: renderFileLoggers(before) };
      control.change(change);
      return { status: 200, body: renderFileLoggers(await control.fileLevels()) };
    },
  };
}
