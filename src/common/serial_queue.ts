// Tasks that must not overlap (the updates of one xDS subscription, the responses of one stream:
// each is applied, then ACKed, before the next begins), where a task may finish synchronously or
// return a promise. A task runs at once when nothing is pending, so synchronous work stays
// synchronous; otherwise it waits for the tasks before it.

export class SerialQueue {
  private tail: Promise<void> | null = null;

  /** `task` must handle its own errors: a rejection would be lost. */
  run(task: () => void | Promise<void>): void {
    if (this.tail === null) {
      const result = task();
      if (result instanceof Promise) this.follow(result);
      return;
    }
    this.follow(this.tail.then(task));
  }

  private follow(work: Promise<void>): void {
    const tail: Promise<void> = work.then(
      () => this.release(tail),
      () => this.release(tail),
    );
    this.tail = tail;
  }

  private release(tail: Promise<void>): void {
    if (this.tail === tail) this.tail = null;
  }
}
