// Watching a directory for changes to the files in it. A directory, not a file: a file replaced
// by an atomic rename is a new inode, which a watch on the old file would never see.

import * as fs from 'node:fs';
import type { Logger } from '../log/logger_api';

/** 'rename': an entry appeared or went (a file moved in, or removed); 'change': written in place. */
export type DirectoryEvent = 'rename' | 'change';

/**
 * Calls `onChange` with the name of each entry of `directory` that is written, created, renamed
 * or removed. `what` says in the log what the watch is for. Null when the directory cannot be
 * watched (logged): the caller goes on without reloads.
 */
export function watchDirectory(directory: string, what: string, componentLog: Logger, onChange: (name: string, event: DirectoryEvent) => void): fs.FSWatcher | null {
  const log = componentLog.forFile(__filename);
  try {
    const watcher = fs.watch(directory, { persistent: false }, (event, name) => {
      if (name !== null) onChange(name.toString(), event);
    });
    watcher.on('error', (e) => log.warn(`stopped watching ${directory} for ${what}: ${e.message}`));
    return watcher;
  } catch (e) {
    log.warn(`cannot watch ${directory} for ${what}: ${(e as Error).message}`);
    return null;
  }
}
