// Notices an operator's symlink swap (`ln -s new tmp && mv -T tmp current`) without a restart:
// the directory holding each symlink is watched for the link's name, and a slow poll of where
// the links point covers what the watch misses (a directory created later, a network mount).

import * as fs from 'node:fs';
import * as path from 'node:path';

/** Events of one swap arrive together: one reload for them. */
const SETTLE_MS = 20;

export class SymlinkWatcher {
  private readonly watchers: fs.FSWatcher[] = [];
  private poll: NodeJS.Timeout | null = null;
  private settle: NodeJS.Timeout | null = null;
  private targets: string;

  constructor(
    private readonly links: readonly string[],
    private readonly onChange: () => void,
    private readonly pollIntervalMs: number,
  ) {
    this.targets = this.resolveTargets();
  }

  start(): void {
    const byDir = new Map<string, Set<string>>();
    for (const link of this.links) {
      const dir = path.dirname(link);
      byDir.set(dir, (byDir.get(dir) ?? new Set()).add(path.basename(link)));
    }
    for (const [dir, names] of byDir) {
      try {
        const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
          if (name === null || names.has(name.toString())) this.changed();
        });
        // A watch that fails later (the directory removed) leaves the poll in charge.
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // The directory is missing for now: the poll notices when the link appears.
      }
    }
    this.poll = setInterval(() => {
      if (this.resolveTargets() !== this.targets) this.changed();
    }, this.pollIntervalMs);
    this.poll.unref();
  }

  close(): void {
    for (const watcher of this.watchers.splice(0)) watcher.close();
    if (this.poll) clearInterval(this.poll);
    if (this.settle) clearTimeout(this.settle);
    this.poll = this.settle = null;
  }

  private changed(): void {
    if (this.settle) return;
    this.settle = setTimeout(() => {
      this.settle = null;
      this.targets = this.resolveTargets();
      this.onChange();
    }, SETTLE_MS);
    this.settle.unref();
  }

  private resolveTargets(): string {
    return this.links
      .map((link) => {
        try {
          return fs.realpathSync(link);
        } catch {
          return '';
        }
      })
      .join('\0');
  }
}
