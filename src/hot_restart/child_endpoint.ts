// Epoch N's side of the conversation with epoch N-1 (Envoy's HotRestartingChild): requests go
// to the parent's socket, replies come back on this epoch's child socket. At epoch 0, and once
// the parent has been told to terminate, there is no parent and every request is a no-op.

import { setImmediate as nextTurn } from 'node:timers/promises';
import * as addon from '../native/addon';
import type { DomainSocket } from './domain_sockets';
import { HotRestartProtocolError, HotRestartTimeoutError } from './errors';
import { DecodedMessage, describeMessage, HotRestartReply, HotRestartRequest } from './messages';

/** Envoy waits forever; a parent this slow is wedged, and the new epoch should say so and exit. */
export const DEFAULT_REPLY_TIMEOUT_MS = 30_000;
/** How long one wait for a reply may hold the event loop before letting it run. */
const RECEIVE_SLICE_MS = 20;

export interface ParentAdminShutdown {
  /** When epoch 0 started: the base of uptime across all epochs. */
  readonly originalStartTimeUnixSeconds: number;
}

type ReplyOf<T extends HotRestartReply['type']> = Extract<HotRestartReply, { type: T }>;

export class ChildEndpoint {
  private parentTerminated = false;
  /** Requests run one at a time: a reply answers the request sent last. */
  private queue: Promise<unknown> = Promise.resolve();

  /** `socket` is this epoch's child socket (HotRestartSockets.child). */
  constructor(
    private readonly socket: DomainSocket,
    private readonly replyTimeoutMs = DEFAULT_REPLY_TIMEOUT_MS,
  ) {}

  /** False at epoch 0 and after terminateParent(). */
  get hasParent(): boolean {
    return this.socket.peerName !== null && !this.parentTerminated;
  }

  /** Asks the parent to close its admin listener (so this epoch can bind it); null without a parent. */
  async shutdownParentAdmin(): Promise<ParentAdminShutdown | null> {
    if (!this.hasParent) return null;
    const reply = await this.request({ type: 'shutdown_admin' }, 'shutdown_admin');
    return { originalStartTimeUnixSeconds: reply.originalStartTimeUnixSeconds };
  }

  /**
   * A duplicate of the parent's listen socket at `address` (see tcpListenAddress), owned by the
   * caller; null when the parent has none (bind a fresh one) or there is no parent.
   * @param workerIndex that worker's socket of a reuse_port listener; null for a shared one
   */
  async duplicateParentListenSocket(address: string, workerIndex: number | null): Promise<number | null> {
    if (!this.hasParent) return null;
    return (await this.request({ type: 'pass_listen_socket', address, workerIndex }, 'pass_listen_socket')).fd;
  }

  /** Tells the parent to stop accepting and start draining; no reply. */
  drainParentListeners(): void {
    if (this.hasParent) this.socket.send({ kind: 'request', request: { type: 'drain_listeners' } });
  }

  /** Tells the parent to shut down; no reply. Later requests are no-ops. */
  terminateParent(): void {
    if (!this.hasParent) return;
    this.socket.send({ kind: 'request', request: { type: 'terminate' } });
    this.parentTerminated = true;
  }

  private request<T extends HotRestartReply['type']>(request: HotRestartRequest, expected: T): Promise<ReplyOf<T>> {
    const result = this.queue.then(() => this.exchange(request, expected));
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async exchange<T extends HotRestartReply['type']>(
    request: HotRestartRequest,
    expected: T,
  ): Promise<ReplyOf<T>> {
    this.socket.send({ kind: 'request', request });
    const deadline = Date.now() + this.replyTimeoutMs;
    for (;;) {
      const message = this.socket.receive(RECEIVE_SLICE_MS);
      if (message !== null) {
        if (message.kind === 'reply' && message.reply.type === expected) return message.reply as ReplyOf<T>;
        discard(message);
        throw new HotRestartProtocolError(
          `the parent process answered a ${request.type} request with ${describeMessage(message)}`,
        );
      }
      if (Date.now() >= deadline) {
        throw new HotRestartTimeoutError(
          `the parent process at ${this.socket.peerName} did not answer a ${request.type} request ` +
            `within ${this.replyTimeoutMs} ms`,
        );
      }
      await nextTurn();
    }
  }
}

/** Closes the descriptor an unexpected message brought, which nobody will own. */
function discard(message: DecodedMessage): void {
  if (message.kind === 'reply' && message.reply.type === 'pass_listen_socket' && message.reply.fd !== null) {
    addon.closeFd(message.reply.fd);
  }
}
