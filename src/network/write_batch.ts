// The small writes one turn of the event loop makes to HTTP/1 connections leave together at its
// end: each socket is corked at its first such write and uncorked once the turn's I/O has all been
// handled (setImmediate runs then). Waking the process that reads a write can cost more than the
// write (an interprocessor interrupt, on a virtual machine an exit to the host): writes spread over
// a busy turn wake an idle peer once each, writes made back to back find it awake after the first.

/** A writer whose socket is corked until flushBatched(). */
export interface BatchedWriter {
  flushBatched(): void;
}

export class WriteBatch {
  private writers: BatchedWriter[] = [];
  /** The array last flushed, reused for the next turn's writers. */
  private spare: BatchedWriter[] = [];
  private scheduled = false;

  /** `writer` corked its socket: it is flushed at the end of this turn. */
  add(writer: BatchedWriter): void {
    this.writers.push(writer);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    const writers = this.writers;
    // Writers added while these flush (a watermark callback that writes) wait for the next turn.
    this.writers = this.spare;
    this.scheduled = false;
    for (let i = 0; i < writers.length; i++) writers[i]!.flushBatched();
    writers.length = 0;
    this.spare = writers;
  };
}
