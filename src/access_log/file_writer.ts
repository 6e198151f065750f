// An access log file (Envoy's AccessLogFileImpl): entries collect in memory and go to the file
// when the buffer is full or when --file-flush-interval-msec elapses, whichever comes first.
// Writes are asynchronous (the thread pool waits on a slow disk or a full pipe, never the event
// loop) and queued, so they land in order and never overlap; reopen() (SIGUSR1) finishes the
// old file and continues at the same path, for log rotation.
//
// Several processes append to one file: it is opened O_APPEND and every write() carries whole
// entries, so their lines interleave but are never cut. A pipe or a terminal (`/dev/stdout`)
// keeps a write whole only up to PIPE_BUF bytes, so there each write holds at most that much
// (an entry longer than that alone goes in several).

import * as fs from 'node:fs';
import { promisify } from 'node:util';
import { CREATED_FILE_MODE } from '../common/file_mode';

/** Envoy's flush threshold (AccessLogFileImpl::MIN_FLUSH_SIZE). */
export const FLUSH_THRESHOLD_BYTES = 64 * 1024;
/** Linux's PIPE_BUF: the largest write a pipe never interleaves with another writer's. */
export const PIPE_BUF = 4096;

const openFd = promisify(fs.open);
const writeFd = promisify(fs.write);
const closeFd = promisify(fs.close);
const fstatFd = promisify(fs.fstat);

export interface FileWriterOptions {
  /**
   * How an entry's characters become bytes: `latin1` for byte strings (an access log's lines,
   * src/common/byte_string.ts), one byte each; `utf8` for Unicode text.
   */
  readonly encoding: 'latin1' | 'utf8';
  /** 0 writes every entry at once. */
  readonly flushIntervalMs: number;
  /** Bytes buffered that make a flush; FLUSH_THRESHOLD_BYTES when unset. */
  readonly flushThresholdBytes?: number;
  /** A failed write loses its entries but not the proxy; the owner reports it. */
  readonly onError: (error: Error) => void;
}

/** An open descriptor and the most one write to it may carry and stay whole. */
interface Target {
  readonly fd: number;
  readonly atomicBytes: number;
  /** False for the process's own standard output or error, which are neither reopened nor closed. */
  readonly owned: boolean;
}

/**
 * The paths that name the process's own descriptors. Used as they are: opening them anew fails
 * when they are sockets (a service's output to journald, a parent's pipe), and a restarted
 * worker inherits the supervisor's.
 */
const STANDARD_STREAMS: ReadonlyMap<string, number> = new Map([
  ['/dev/stdout', 1],
  ['/dev/stderr', 2],
]);
/** How long a write that found a non-blocking descriptor full waits before it tries again. */
const FULL_RETRY_MS = 5;
/** The most bytes one character takes: a UTF-16 code unit in UTF-8 takes up to 3. */
const MAX_BYTES_PER_UNIT = { latin1: 1, utf8: 3 } as const;

export class BufferedFileWriter {
  /** Buffered bytes already cut from their chunk (a full chunk's tail, an entry too long for one), in order. */
  private pending: Buffer[] = [];
  /** Bytes buffered: those of `pending` and the current chunk's not yet handed to a write. */
  private pendingBytes = 0;
  /**
   * Where each buffered entry ends, counted from the first buffered byte: a pipe's writes are
   * cut there. Numbers, not a view per entry, as this runs for every logged request.
   */
  private entryEnds: number[] = [];
  /**
   * Entries are encoded one after another into this buffer: no buffer is allocated per entry,
   * and nothing of an entry outlives its encoding but its bytes. Bytes before `chunkStart` are
   * handed to a write already and never written over; a full chunk is left to its writes.
   */
  private chunk: Buffer | null = null;
  private chunkStart = 0;
  private chunkUsed = 0;
  /** The tail of the write queue. */
  private queue: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout | null;
  private closed = false;

  /** Opens (creating, appending to) `path`; rejects with the file system's error. */
  static async open(path: string, options: FileWriterOptions): Promise<BufferedFileWriter> {
    return new BufferedFileWriter(path, await openTarget(path), options);
  }

  /** The same, at once: for what is built before it serves (a worker's filter chains). */
  static openSync(path: string, options: FileWriterOptions): BufferedFileWriter {
    const standard = STANDARD_STREAMS.get(path);
    const fd = standard ?? fs.openSync(path, 'a', CREATED_FILE_MODE);
    return new BufferedFileWriter(path, { fd, atomicBytes: atomicBytesOf(fs.fstatSync(fd)), owned: standard === undefined }, options);
  }

  private constructor(
    readonly path: string,
    private target: Target,
    private readonly options: FileWriterOptions,
  ) {
    this.timer = options.flushIntervalMs > 0 ? setInterval(() => void this.flush(), options.flushIntervalMs) : null;
    // The flush timer alone must not keep the process alive.
    this.timer?.unref();
  }

  /** Buffers one entry (whole lines), written in one piece with others. */
  write(text: string): void {
    if (this.closed) return;
    const threshold = this.options.flushThresholdBytes ?? FLUSH_THRESHOLD_BYTES;
    this.pendingBytes += this.encode(text, Math.max(threshold, FLUSH_THRESHOLD_BYTES));
    this.entryEnds.push(this.pendingBytes);
    if (this.timer === null || this.pendingBytes >= threshold) void this.flush();
  }

  /** Writes what is buffered; resolves once it is in the file (or failed). */
  flush(): Promise<void> {
    this.cutChunk();
    if (this.pending.length === 0) return this.queue;
    const data = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    const ends = this.entryEnds;
    this.pending = [];
    this.pendingBytes = 0;
    this.entryEnds = [];
    return this.enqueue(() => writeEntries(this.target, data, ends));
  }

  /** Flushes to the current file, then writes to a new file at the same path. */
  reopen(): Promise<void> {
    void this.flush();
    return this.enqueue(async () => {
      if (!this.target.owned) return;
      const previous = this.target;
      this.target = await openTarget(this.path);
      await closeFd(previous.fd);
    });
  }

  /** Flushes and closes the file; later entries are dropped. */
  close(): Promise<void> {
    if (this.closed) return this.queue;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    void this.flush();
    return this.enqueue(async () => {
      if (this.target.owned) await closeFd(this.target.fd);
    });
  }

  /** Appends `text` in the writer's encoding to the current chunk when it surely fits there (a new chunk when not); its length in bytes. */
  private encode(text: string, size: number): number {
    const encoding = this.options.encoding;
    const most = text.length * MAX_BYTES_PER_UNIT[encoding];
    if (most > size) {
      this.cutChunk();
      const entry = Buffer.from(text, encoding);
      this.pending.push(entry);
      return entry.length;
    }
    let chunk = this.chunk;
    if (chunk === null || this.chunkUsed + most > chunk.length) {
      this.cutChunk();
      chunk = this.chunk = Buffer.allocUnsafe(size);
      this.chunkStart = this.chunkUsed = 0;
    }
    const bytes = chunk.write(text, this.chunkUsed, encoding);
    this.chunkUsed += bytes;
    return bytes;
  }

  /** Moves the current chunk's buffered bytes to `pending`. */
  private cutChunk(): void {
    if (this.chunk === null || this.chunkUsed === this.chunkStart) return;
    this.pending.push(this.chunk.subarray(this.chunkStart, this.chunkUsed));
    this.chunkStart = this.chunkUsed;
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step).catch((error: Error) => this.options.onError(error));
    return this.queue;
  }
}

async function openTarget(path: string): Promise<Target> {
  const standard = STANDARD_STREAMS.get(path);
  const fd = standard ?? (await openFd(path, 'a', CREATED_FILE_MODE));
  return { fd, atomicBytes: atomicBytesOf(await fstatFd(fd)), owned: standard === undefined };
}

/** A regular file takes any write whole (O_APPEND); a pipe, socket or terminal up to PIPE_BUF. */
function atomicBytesOf(stats: fs.Stats): number {
  return stats.isFile() ? Infinity : PIPE_BUF;
}

async function writeEntries(target: Target, data: Buffer, entryEnds: readonly number[]): Promise<void> {
  for (const piece of wholeWrites(data, entryEnds, target.atomicBytes)) await writeAll(target.fd, piece);
}

/**
 * `data` (entries ending at `entryEnds`) in as few writes as keep each entry whole: consecutive
 * entries share a write up to `atomicBytes`; an entry longer than that has a write of its own.
 */
export function wholeWrites(data: Buffer, entryEnds: readonly number[], atomicBytes: number): Buffer[] {
  if (data.length <= atomicBytes) return data.length === 0 ? [] : [data];
  const writes: Buffer[] = [];
  let start = 0;
  let next = 0;
  while (start < data.length) {
    let end = entryEnds[next++]!;
    while (next < entryEnds.length && entryEnds[next]! - start <= atomicBytes) end = entryEnds[next++]!;
    writes.push(data.subarray(start, end));
    start = end;
  }
  return writes;
}

async function writeAll(fd: number, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    try {
      const { bytesWritten } = await writeFd(fd, data, offset, data.length - offset, null);
      offset += bytesWritten;
    } catch (error) {
      // An inherited standard stream may be non-blocking: full is not failed.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      await new Promise((resolve) => setTimeout(resolve, FULL_RETRY_MS));
    }
  }
}
