// Reloads TLS contexts when the files they read change, without a restart: new connections get
// the new material, established ones keep theirs. A burst of events (write, then rename) is
// reloaded once, after a short pause.

import type * as fs from 'node:fs';
import * as path from 'node:path';
import { watchDirectory } from '../common/directory_watch';
import type { Clock, TimeoutHandle } from '../common/clock';
import type { Logger } from '../log/logger_api';
import type { TlsContext } from './tls_context';

/** How long the files must be quiet before a reload: long enough for write-then-rename. */
const DEBOUNCE_MS = 100;

export interface CertificateWatcherDeps {
  readonly clock: Clock;
  readonly log: Logger;
  /** After each reload that took (the supervisor refreshes its expiry gauge). */
  readonly onReload?: () => void;
}

export class CertificateWatcher {
  private readonly watchers: fs.FSWatcher[] = [];
  private readonly log: Logger;
  /** Contexts waiting for their debounce to end, with its timer. */
  private readonly pending = new Map<TlsContext, TimeoutHandle>();

  /** directory -> file name -> the contexts that read it */
  private readonly byDirectory = new Map<string, Map<string, TlsContext[]>>();

  constructor(
    contexts: readonly TlsContext[],
    private readonly deps: CertificateWatcherDeps,
  ) {
    this.log = deps.log.forFile(__filename);
    this.add(contexts);
  }

  /** Watches more contexts (made after start: a cluster's health checks, a worker's clusters). */
  add(contexts: readonly TlsContext[]): void {
    for (const context of contexts) {
      for (const file of context.files) {
        const absolute = path.resolve(file);
        const directory = path.dirname(absolute);
        let names = this.byDirectory.get(directory);
        if (names === undefined) {
          const watched = new Map<string, TlsContext[]>();
          names = watched;
          this.byDirectory.set(directory, watched);
          const watcher = watchDirectory(directory, 'certificate changes', this.log, (name) => {
            for (const reader of watched.get(name) ?? []) this.schedule(reader);
          });
          if (watcher !== null) this.watchers.push(watcher);
        }
        const readers = names.get(path.basename(absolute)) ?? [];
        if (!readers.includes(context)) readers.push(context);
        names.set(path.basename(absolute), readers);
      }
    }
  }

  close(): void {
    for (const watcher of this.watchers) watcher.close();
    for (const timer of this.pending.values()) this.deps.clock.clearTimeout(timer);
    this.pending.clear();
  }

  private schedule(context: TlsContext): void {
    const earlier = this.pending.get(context);
    if (earlier !== undefined) this.deps.clock.clearTimeout(earlier);
    this.pending.set(
      context,
      this.deps.clock.setTimeout(() => {
        this.pending.delete(context);
        this.reload(context);
      }, DEBOUNCE_MS),
    );
  }

  private reload(context: TlsContext): void {
    const error = context.reload();
    const files = context.files.join(', ');
    if (error !== null) {
      this.log.warn(`TLS context of ${files} not reloaded, keeping the previous certificates: ${error.message}`);
      return;
    }
    this.log.info(`TLS context reloaded from ${files}`);
    this.deps.onReload?.();
  }
}
