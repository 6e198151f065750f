import { isComponentName, type ComponentName } from './components';
import { ComponentLogLevelSyntaxError, InvalidComponentError } from './errors';
import { parseLogLevel, type LogLevel } from './level';

/**
 * Parses --component-log-level, e.g. `upstream:debug,connection:trace`, checking each entry's
 * shape, then its level, then its component, as Envoy does; the first bad entry throws.
 * Entries apply in order, so a component named twice keeps its last level.
 */
export function parseComponentLogLevels(text: string): Map<ComponentName, LogLevel> {
  const levels = new Map<ComponentName, LogLevel>();
  if (text === '') return levels;
  for (const entry of text.split(',')) {
    const parts = entry.split(':');
    if (parts.length !== 2) throw new ComponentLogLevelSyntaxError(entry);
    const [component, level] = parts as [string, string];
    const parsedLevel = parseLogLevel(level);
    if (!isComponentName(component)) throw new InvalidComponentError(component);
    levels.set(component, parsedLevel);
  }
  return levels;
}
