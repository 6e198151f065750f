// Epoch N's answers to epoch N+1 (Envoy's HotRestartingParent): polls this epoch's parent socket
// and hands each request to the supervisor. Requests are rare (a handful per restart), so a
// short poll is simpler than watching the descriptor. They come in a burst, though, each waiting
// for the answer to the one before (the child blocks on it): once one came, the socket is polled
// every millisecond for a while, which took 30-40 ms off a restart that waited out the idle
// interval at each request.

import type { Logger } from '../log/logger_api';
import type { DomainSocket } from './domain_sockets';
import { HotRestartError } from './errors';
import { DecodedMessage, describeMessage, DIDNT_RECOGNIZE, HotRestartMessage, HotRestartRequest } from './messages';

export const PARENT_POLL_INTERVAL_MS = 20;
/** The poll's interval for BURST_MS after a message. */
const BURST_POLL_INTERVAL_MS = 1;
const BURST_MS = 2000;

/** What the supervisor does for its child epoch. */
export interface ParentHandlers {
  /**
   * Close the admin listener and stop flushing stats; then terminate this epoch's own parent
   * (so epoch N-1 goes when N+1 arrives). Resolves with epoch 0's start time.
   */
  shutdownAdmin(): Promise<{ originalStartTimeUnixSeconds: number }>;
  /**
   * The descriptor of this epoch's listen socket at `address` (a `tcp://ip:port` string): the one
   * its workers share (`workerIndex` null), or that worker's of a reuse_port listener; null if
   * there is none of that kind. It stays this epoch's: the child receives a duplicate.
   */
  passListenSocket(address: string, workerIndex: number | null): number | null;
  /** Stop accepting on every listener and start the drain sequence (--drain-time-s). */
  drainListeners(): void;
  /** Shut down cleanly, as on SIGTERM, and exit 0. */
  terminate(): void;
}

export class ParentEndpoint {
  private timer: NodeJS.Timeout | null = null;
  /** When the last message came (performance.now()); -Infinity before the first. */
  private lastMessageAt = -Infinity;
  /** Requests are handled one at a time, in the order they came. */
  private handling: Promise<void> = Promise.resolve();
  private readonly log: Logger;

  /** `socket` is this epoch's parent socket (HotRestartSockets.parent). */
  constructor(
    private readonly socket: DomainSocket,
    private readonly handlers: ParentHandlers,
    log: Logger,
    private readonly pollIntervalMs = PARENT_POLL_INTERVAL_MS,
  ) {
    this.log = log.forFile(__filename);
  }

  /** Starts answering. The poll timer does not keep the process alive. */
  start(): void {
    if (this.timer === null) this.schedule();
  }

  /** Stops reading requests; one already being handled finishes. */
  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    const bursting = performance.now() - this.lastMessageAt < BURST_MS;
    this.timer = setTimeout(() => {
      this.poll();
      if (this.timer !== null) this.schedule();
    }, bursting ? BURST_POLL_INTERVAL_MS : this.pollIntervalMs);
    this.timer.unref();
  }

  private poll(): void {
    for (;;) {
      let message: DecodedMessage | null;
      try {
        message = this.socket.receive(0);
      } catch (error) {
        // Not transient on a bound datagram socket: stop rather than fail every poll.
        const reason = (error as Error).message;
        this.log.error(`hot restart: reading ${this.socket.name} failed, no longer answering: ${reason}`);
        this.stop();
        return;
      }
      if (message === null) return;
      this.lastMessageAt = performance.now();
      const received = message;
      this.handling = this.handling
        .then(() => this.handle(received))
        .catch((error: Error) => {
          this.log.error(`hot restart: handling a ${describeMessage(received)} failed: ${error.message}`);
        });
    }
  }

  private async handle(message: DecodedMessage): Promise<void> {
    if (message.kind === 'request') return this.handleRequest(message.request);
    // Envoy's parent gets only requests: a reply or an unknown message means the child speaks another protocol.
    const what = describeMessage(message);
    this.log.warn(`hot restart: the child sent a ${what}; answering didnt_recognize_your_last_message`);
    this.reply(DIDNT_RECOGNIZE);
  }

  private async handleRequest(request: HotRestartRequest): Promise<void> {
    switch (request.type) {
      case 'shutdown_admin': {
        const { originalStartTimeUnixSeconds } = await this.handlers.shutdownAdmin();
        this.reply({ kind: 'reply', reply: { type: 'shutdown_admin', originalStartTimeUnixSeconds } });
        return;
      }
      case 'pass_listen_socket': {
        const fd = this.handlers.passListenSocket(request.address, request.workerIndex);
        this.reply({ kind: 'reply', reply: { type: 'pass_listen_socket', fd } });
        return;
      }
      case 'drain_listeners':
        this.handlers.drainListeners();
        return;
      case 'terminate':
        this.log.info('shutting down due to child request');
        this.handlers.terminate();
        return;
    }
  }

  /** A child that went away before its answer is the child's failure, not this epoch's. */
  private reply(message: HotRestartMessage): void {
    try {
      this.socket.send(message);
    } catch (error) {
      if (!(error instanceof HotRestartError)) throw error;
      this.log.error(`hot restart: answering the child failed: ${error.message}`);
    }
  }
}
