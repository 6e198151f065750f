// One worker's listener changes, in order: its start's static listen sockets after the start
// message that asks for them; then LDS's, each new listener's socket over the handoff datagram
// socket before the message that asks for it; updates and removals follow behind. The kernel
// queues only a few datagrams per socket (net.unix.max_dgram_qlen, 10 by default) and the worker
// reads one per listener_add it handles, so a push of many listeners finds the socket full: the
// queue waits a moment and sends again, never dropping or reordering a change.

import type { ListenerConfig } from '../config/model';
import { NativeError } from '../native/addon';
import type { SupervisorMessage } from './worker_protocol';
import { WORKER_PROTOCOL_VERSION } from './worker_protocol';

/** How long a full handoff socket is given before the next try. */
const FULL_RETRY_MS = 5;

type Change =
  | { readonly kind: 'socket'; readonly config: ListenerConfig; readonly fd: number }
  /** A socket a message sent before it asks for (a start's static listeners). */
  | { readonly kind: 'handover'; readonly name: string; readonly fd: number }
  | { readonly kind: 'message'; readonly message: SupervisorMessage };

export interface ListenerChangeQueueDeps {
  /** Sends the datagram carrying `fd` for listener `name`; throws a NativeError (EAGAIN when the socket is full). */
  readonly sendSocket: (name: string, fd: number) => void;
  /** Sends an IPC message to the worker; false when it is gone. */
  readonly sendMessage: (message: SupervisorMessage) => boolean;
  readonly onHandoffError: (name: string, error: Error) => void;
}

export class ListenerChangeQueue {
  private readonly changes: Change[] = [];
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly deps: ListenerChangeQueueDeps) {}

  /** A listener on a socket the worker does not have yet. */
  addListener(config: ListenerConfig, fd: number): void {
    this.changes.push({ kind: 'socket', config, fd });
    this.flush();
  }

  /** The socket of listener `name`, which a message already sent (the worker's start) asks for. */
  handOver(name: string, fd: number): void {
    this.changes.push({ kind: 'handover', name, fd });
    this.flush();
  }

  /** An update or a removal: after the listeners queued before it. */
  send(message: SupervisorMessage): void {
    if (this.changes.length === 0 && this.deps.sendMessage(message)) return;
    this.changes.push({ kind: 'message', message });
    this.flush();
  }

  /** The supervisor is closing `fd` (its listener is gone): a socket not handed over yet is not sent. */
  forgetSocket(fd: number): void {
    for (let i = this.changes.length - 1; i >= 0; i--) {
      const change = this.changes[i]!;
      if (change.kind === 'socket' && change.fd === fd) this.changes.splice(i, 1);
    }
  }

  /** The worker is gone: nothing more goes to it. */
  clear(): void {
    this.changes.length = 0;
    if (this.retry !== null) clearTimeout(this.retry);
    this.retry = null;
  }

  private flush(): void {
    if (this.retry !== null) return;
    while (this.changes.length > 0) {
      const change = this.changes[0]!;
      if (change.kind === 'message') {
        if (!this.deps.sendMessage(change.message)) return this.clear();
        this.changes.shift();
        continue;
      }
      const name = change.kind === 'socket' ? change.config.name : change.name;
      try {
        this.deps.sendSocket(name, change.fd);
      } catch (error) {
        if (error instanceof NativeError && error.code === 'EAGAIN') {
          this.retry = setTimeout(() => {
            this.retry = null;
            this.flush();
          }, FULL_RETRY_MS);
          return;
        }
        this.changes.shift();
        this.deps.onHandoffError(name, error as Error);
        continue;
      }
      this.changes.shift();
      if (change.kind === 'handover') continue;
      if (!this.deps.sendMessage({ v: WORKER_PROTOCOL_VERSION, type: 'listener_add', config: change.config })) return this.clear();
    }
  }
}
