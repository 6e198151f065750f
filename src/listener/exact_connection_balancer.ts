// A listener's connection_balance_config.exact_balance (Envoy 1.16): each connection a worker
// accepts goes to the worker holding the fewest of the listener's connections, counted for that
// worker as it is picked so that the next pick, in any worker, sees it. Envoy's workers are
// threads that post the connection to each other; ours are processes, so the accepting worker
// sends the descriptor to the chosen worker's inbox, a Unix datagram socket each worker binds
// for the listen socket. The counts are cells of the stats region, one a worker of the epoch.

import * as addon from '../native/addon';
import type { SharedCounts } from '../stats/shared_counts';

/** Which epoch's workers balance among themselves, and which of them this one is. */
export interface BalanceGroup {
  /** Tells one epoch's workers from another's (the supervisor's pid). */
  readonly id: string;
  readonly worker: number;
  readonly workers: number;
}

/** The worker with the fewest connections; `self` on a tie, which passes nothing on. */
export function leastLoaded(counts: readonly number[], self: number): number {
  let best = self;
  for (let worker = 0; worker < counts.length; worker++) {
    if (counts[worker]! < counts[best]!) best = worker;
  }
  return best;
}

/** The inbox of `worker` for the listen socket at `address` (addressString's, sanitized). */
export function inboxName(group: BalanceGroup, worker: number, address: string): string {
  return `@proxy_exact_balance_${group.id}_${worker}_${address}`;
}

/** The cells that count each worker's connections of the listen socket at `address`. */
export function countsName(group: BalanceGroup, address: string): string {
  return `listener.${address}.exact_balance.${group.id}`;
}

export class ExactConnectionBalancer {
  private readonly inboxFd: number;
  private readonly sendFd: number;
  private inbox: addon.Acceptor | null = null;
  private stopped = false;
  private closed = false;
  /** Every worker's count as read for one pick: one array, reused. */
  private readonly snapshot: number[];
  /** A balanced connection's 'close' listener: one function, not a closure per connection. */
  readonly onConnectionClose = (): void => this.counts.addUnowned(this.group.worker, -1);

  /**
   * Binds this worker's inbox, its count zeroed: a worker that held it before is gone, and its
   * connections with it.
   */
  constructor(
    private readonly group: BalanceGroup,
    private readonly address: string,
    private readonly counts: SharedCounts,
  ) {
    counts.reset(group.worker);
    this.snapshot = new Array<number>(group.workers).fill(0);
    this.inboxFd = addon.unixDgramBind(inboxName(group, group.worker, address));
    this.sendFd = addon.unixDgramSocket();
  }

  /**
   * Hands `onReceived` the connections other workers pass here. A failed receive carries its
   * code, as a failed accept does, and pauses the inbox until resume.
   */
  receive(onReceived: addon.OnAccepted): void {
    this.inbox = addon.inboxStart(this.inboxFd, onReceived);
  }

  /** Receives again, after a failed receive paused the inbox. */
  resume(): void {
    if (this.inbox !== null) addon.acceptorResume(this.inbox);
  }

  /**
   * While this worker takes no connections (the overload manager's stop_accepting_connections),
   * its count stands that much higher, so that no other worker picks it; those passed before
   * still arrive and are served, as accepted ones are.
   */
  setAccepting(accepting: boolean): void {
    if (this.stopped === !accepting) return;
    this.stopped = !accepting;
    this.counts.addUnowned(this.group.worker, accepting ? -NOT_ACCEPTING : NOT_ACCEPTING);
  }

  /**
   * Counts each of `fds`, connections this worker accepted, for the worker holding the fewest
   * at that moment, and passes each other worker its share in one datagram (an inbox queues a
   * few datagrams only). Returns those this worker keeps: its share, and any share that could
   * not be sent, whose count comes back here.
   */
  distribute(fds: readonly number[]): number[] {
    const { worker: self, workers } = this.group;
    const shares: number[][] = Array.from({ length: workers }, () => []);
    for (const fd of fds) {
      for (let worker = 0; worker < workers; worker++) this.snapshot[worker] = this.counts.get(worker);
      const target = leastLoaded(this.snapshot, self);
      this.counts.addUnowned(target, 1);
      shares[target]!.push(fd);
    }
    const kept = shares[self]!;
    shares.forEach((share, worker) => {
      if (worker === self || share.length === 0) return;
      try {
        addon.unixDgramSend(this.sendFd, inboxName(this.group, worker, this.address), EMPTY, share);
      } catch (error) {
        // Its inbox is gone (the worker is being replaced, or stopped listening) or full.
        if (!(error instanceof addon.NativeError)) throw error;
        this.counts.addUnowned(worker, -share.length);
        this.counts.addUnowned(self, share.length);
        kept.push(...share);
        return;
      }
      for (const fd of share) addon.closeFd(fd);
    });
    return kept;
  }

  /** Unbinds the inbox; the counts stay, for the connections still open. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.inbox !== null) addon.acceptorClose(this.inbox);
    this.inbox = null;
    addon.closeFd(this.inboxFd);
    addon.closeFd(this.sendFd);
  }
}

const EMPTY = new Uint8Array(0);

/** What a worker that takes no connections adds to its count: more than any worker holds. */
const NOT_ACCEPTING = 1 << 24;
