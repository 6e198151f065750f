// A change of logger levels made through POST /logging: made in the supervisor, then sent to
// every worker, which makes the same change to its own loggers.

import type { ComponentName } from './components';
import type { LogLevel } from './level';
import type { LogManager } from './log_manager';
import type { LogSettings } from './log_settings';

export type LevelChange = ComponentLevelChange | FileLevelChange;

export interface ComponentLevelChange {
  /** null: every logger (`?level=`), as -l/--log-level sets them at start-up. */
  readonly component: ComponentName | null;
  readonly level: LogLevel;
}

/** Fine-grain logging: file loggers by path (`?<path>=<level>`, `?paths=<path>:<level>,...`). */
export interface FileLevelChange {
  readonly files: readonly (readonly [path: string, level: LogLevel])[];
}

export function applyLevelChange(logs: LogManager, change: LevelChange): void {
  if ('files' in change) {
    for (const [path, level] of change.files) logs.setFileLevel(path, level);
  } else if (change.component === null) {
    logs.setLevel(change.level);
  } else {
    logs.setComponentLevel(change.component, change.level);
  }
}

/**
 * The settings a process started now needs to log as `logs` does (a restarted worker): every
 * component's current level, the level of fine-grain loggers not yet made, and the per-file rules.
 */
export function currentLogSettings(base: LogSettings, logs: LogManager): LogSettings {
  return {
    ...base,
    level: logs.defaultLevel,
    componentLevels: logs.componentLevels().map(({ name, level }) => [name as ComponentName, level] as const),
    fileLevels: logs.fileLevelRules(),
  };
}
