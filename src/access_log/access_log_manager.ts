// The process's access log files (Envoy's AccessLogManager): one writer per path however many
// users share it, all flushed at --file-flush-interval-msec, reopened together on SIGUSR1 and
// flushed and closed together at exit.

import { BufferedFileWriter, type FileWriterOptions } from './file_writer';

export interface AccessLogManagerOptions {
  readonly flushIntervalMs: number;
  readonly onError: (path: string, error: Error) => void;
}

export class AccessLogManager {
  private readonly files = new Map<string, Promise<BufferedFileWriter>>();
  /** The writers openSync() opened, for its later callers. */
  private readonly opened = new Map<string, BufferedFileWriter>();

  constructor(private readonly options: AccessLogManagerOptions) {}

  /** The writer of `path`, opened on first use; rejects when the file cannot be opened. */
  open(path: string): Promise<BufferedFileWriter> {
    let file = this.files.get(path);
    if (file === undefined) {
      file = BufferedFileWriter.open(path, this.writerOptions(path));
      this.files.set(path, file);
      // A failed open is not cached: a later user may try again.
      file.catch(() => this.files.delete(path));
    }
    return file;
  }

  /**
   * The same at once, for what is built synchronously (a worker's filter chains); a path is
   * opened either way, not both.
   * @throws the file system's error
   */
  openSync(path: string): BufferedFileWriter {
    let writer = this.opened.get(path);
    if (writer === undefined) {
      writer = BufferedFileWriter.openSync(path, this.writerOptions(path));
      this.opened.set(path, writer);
      this.files.set(path, Promise.resolve(writer));
    }
    return writer;
  }

  /** Access log lines are byte strings (src/access_log/log_formatter.ts). */
  private writerOptions(path: string): FileWriterOptions {
    return { encoding: 'latin1', flushIntervalMs: this.options.flushIntervalMs, onError: (error: Error) => this.options.onError(path, error) };
  }

  async reopen(): Promise<void> {
    await Promise.allSettled([...this.files.values()].map(async (file) => (await file).reopen()));
  }

  async close(): Promise<void> {
    const files = [...this.files.values()];
    this.files.clear();
    this.opened.clear();
    await Promise.allSettled(files.map(async (file) => (await file).close()));
  }
}
