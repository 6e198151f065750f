// An access log file (Envoy's AccessLogFileImpl): lines collect in memory and go to the file
// in one write when the buffer is full or when --file-flush-interval-msec elapses, whichever
// comes first. Writes are queued, so they land in order and never overlap; reopen() (SIGUSR1)
// finishes the old file and continues at the same path, for log rotation.

import { open, type FileHandle } from 'node:fs/promises';
import { CREATED_FILE_MODE } from '../common/file_mode';

/** Envoy's flush threshold (AccessLogFileImpl::MIN_FLUSH_SIZE). */
export const FLUSH_THRESHOLD_BYTES = 64 * 1024;

export interface FileWriterOptions {
  /** 0 writes every line at once. */
  readonly flushIntervalMs: number;
  readonly flushThresholdBytes?: number;
  /** A failed write loses its lines but not the proxy; the owner reports it. */
  readonly onError: (error: Error) => void;
}

export class BufferedFileWriter {
  private pending: string[] = [];
  private pendingBytes = 0;
  /** The tail of the write queue. */
  private queue: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout | null;
  private closed = false;

  /** Opens (creating, appending to) `path`; rejects with the file system's error. */
  static async open(path: string, options: FileWriterOptions): Promise<BufferedFileWriter> {
    return new BufferedFileWriter(path, await open(path, 'a', CREATED_FILE_MODE), options);
  }

  private constructor(
    readonly path: string,
    private handle: FileHandle,
    private readonly options: FileWriterOptions,
  ) {
    this.timer = options.flushIntervalMs > 0 ? setInterval(() => void this.flush(), options.flushIntervalMs) : null;
    // The flush timer alone must not keep the process alive.
    this.timer?.unref();
  }

  write(text: string): void {
    if (this.closed) return;
    this.pending.push(text);
    this.pendingBytes += Buffer.byteLength(text);
    const threshold = this.options.flushThresholdBytes ?? FLUSH_THRESHOLD_BYTES;
    if (this.timer === null || this.pendingBytes >= threshold) void this.flush();
  }

  /** Writes what is buffered; resolves once it is in the file (or failed). */
  flush(): Promise<void> {
    if (this.pending.length === 0) return this.queue;
    const data = Buffer.from(this.pending.join(''));
    this.pending = [];
    this.pendingBytes = 0;
    return this.enqueue(() => writeAll(this.handle, data));
  }

  /** Flushes to the current file, then writes to a new file at the same path. */
  reopen(): Promise<void> {
    void this.flush();
    return this.enqueue(async () => {
      const reopened = await open(this.path, 'a', CREATED_FILE_MODE);
      const previous = this.handle;
      this.handle = reopened;
      await previous.close();
    });
  }

  /** Flushes and closes the file; later lines are dropped. */
  close(): Promise<void> {
    if (this.closed) return this.queue;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    void this.flush();
    return this.enqueue(() => this.handle.close());
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step).catch((error: Error) => this.options.onError(error));
    return this.queue;
  }
}

async function writeAll(handle: FileHandle, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset, null);
    offset += bytesWritten;
  }
}
