// Where a /stats renderer gathers its output between two yields. A renderer is a generator
// that the admin server resumes one chunk at a time, turning to the supervisor's other work in
// between; so a chunk is due after ~64 KiB of text, or after a bounded number of stats looked
// at, whichever comes first (a filter that rejects everything still pauses). An empty chunk is
// such a pause: nothing to write, but the loop gets its turn.

const CHUNK_CHARS = 64 * 1024;
/** A few microseconds per stat at worst (a first Prometheus render): ~10 ms between turns. */
const STATS_PER_CHUNK = 4096;

export class ChunkBuffer {
  private text = '';
  private stats = 0;

  add(text: string): void {
    this.text += text;
  }

  /** Counts one stat looked at; true when the caller should yield take(). */
  step(): boolean {
    return ++this.stats >= STATS_PER_CHUNK || this.text.length >= CHUNK_CHARS;
  }

  /** The text gathered since the last take (possibly empty). */
  take(): string {
    const text = this.text;
    this.text = '';
    this.stats = 0;
    return text;
  }
}
