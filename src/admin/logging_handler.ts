// POST /logging (Envoy's logs handler): lists the component loggers and their levels, or
// changes one logger's level (`?<component>=<level>`) or every logger's (`?level=<level>`).
// With --enable-fine-grain-logging the file loggers take their place (fine_grain_logging_handler.ts).

import { isComponentName } from '../log/components';
import { isLogLevel, LOG_LEVELS } from '../log/level';
import type { ComponentLevelChange, LevelChange } from '../log/level_change';
import type { LoggerLevel } from '../log/log_manager';
import { AdminHandler, AdminResponse } from './admin_server';
import type { QueryParams } from './query';

export interface LoggingControl {
  /** Component loggers in registry order. */
  levels(): readonly LoggerLevel[];
  /** Makes the change here and sends it to every worker. */
  change(change: LevelChange): void;
}

/** Envoy's `levels:` line, with a space after each level name. */
export const LEVELS_LINE = `levels: ${LOG_LEVELS.map((level) => `${level} `).join('')}\n`;

// Envoy's text.
export const LOGGING_USAGE =
  'usage: /logging?<name>=<level> (change single level)\n' +
  'usage: /logging?level=<level> (change all levels)\n' +
  LEVELS_LINE;

export function renderLoggers(levels: readonly LoggerLevel[]): string {
  return `active loggers:\n${levels.map((l) => `  ${l.name}: ${l.level}\n`).join('')}\n`;
}

/** The change a query asks for; null when it asks for none (a listing); 'invalid' otherwise. */
export function parseLevelChange(query: QueryParams): ComponentLevelChange | null | 'invalid' {
  if (query.size === 0) return null;
  if (query.size !== 1) return 'invalid';
  const [[name, level]] = [...query];
  if (!isLogLevel(level)) return 'invalid';
  if (name === 'level') return { component: null, level };
  return isComponentName(name) ? { component: name, level } : 'invalid';
}

export function loggingHandler(control: LoggingControl): AdminHandler {
  return {
    path: '/logging',
    help: 'query/change logging levels',
    mutatesState: true,
    decodeQuery: false,
    handle: (req): AdminResponse => {
      const change = parseLevelChange(req.query);
      // This issue answers 400 where Envoy answers 404: the path exists, the parameters are wrong.
      if (change === 'invalid') return { status: 400, body: LOGGING_USAGE + renderLoggers(control.levels()) };
      if (change !== null) control.change(change);
      return { status: 200, body: renderLoggers(control.levels()) };
    },
  };
}
