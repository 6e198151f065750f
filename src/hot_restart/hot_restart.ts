// What the supervisor sees of hot restart (Envoy's HotRestart interface): a real one over the
// domain sockets, and the no-op of --disable-hot-restart and --mode validate. Failures of the
// conversation with the parent are logged and survived: a parent that died during the
// handover must not take the new epoch down with it.

import type { Logger } from '../log/logger_api';
import { claimBaseId, writeBaseIdFile } from './base_id';
import { ChildEndpoint } from './child_endpoint';
import { HotRestartSockets } from './domain_sockets';
import { HotRestartError } from './errors';
import { ParentEndpoint, ParentHandlers } from './parent_endpoint';

export interface HotRestart {
  /** The base id in use (the dynamic one with --use-dynamic-base-id). */
  readonly baseId: number;
  /** Epoch 0's start time learned from the parent, or null (no parent, or it did not answer). */
  shutdownParentAdmin(): Promise<number | null>;
  /**
   * A duplicate of the parent's listen socket for `tcp://ip:port`, or null: bind a fresh one.
   * @param workerIndex that worker's socket of a reuse_port listener; null for a shared one
   */
  duplicateParentListenSocket(address: string, workerIndex: number | null): Promise<number | null>;
  drainParentListeners(): void;
  terminateParent(): void;
  /** Starts answering the next epoch. */
  serveChild(handlers: ParentHandlers): void;
  close(): void;
}

export interface HotRestartOptions {
  readonly baseId: number;
  readonly useDynamicBaseId: boolean;
  /** --base-id-path; '' when unset. */
  readonly baseIdPath: string;
  readonly restartEpoch: number;
  readonly socketPath: string;
  /** Octal as given (0o600 by default); 0 for an abstract socket path, as Envoy reports it. */
  readonly socketMode: number;
}

export class NopHotRestart implements HotRestart {
  constructor(readonly baseId: number) {}
  shutdownParentAdmin(): Promise<number | null> {
    return Promise.resolve(null);
  }
  duplicateParentListenSocket(): Promise<number | null> {
    return Promise.resolve(null);
  }
  drainParentListeners(): void {}
  terminateParent(): void {}
  serveChild(): void {}
  close(): void {}
}

export class DomainSocketHotRestart implements HotRestart {
  private parentEndpoint: ParentEndpoint | null = null;
  /** Set once the parent failed to answer: later requests would only wait out their timeouts. */
  private parentGone = false;
  private readonly log: Logger;

  private constructor(
    readonly baseId: number,
    private readonly sockets: HotRestartSockets,
    private readonly child: ChildEndpoint,
    log: Logger,
  ) {
    this.log = log.forFile(__filename);
  }

  /**
   * Binds this epoch's two domain sockets (which also proves no other process runs this epoch
   * of this base id) and writes --base-id-path. Throws HotRestartError subclasses.
   */
  static open(options: HotRestartOptions, log: Logger): DomainSocketHotRestart {
    const { baseId, bound } = claimBaseId(options, (id) =>
      HotRestartSockets.bind({
        socketPath: options.socketPath,
        socketMode: options.socketMode,
        baseId: id,
        restartEpoch: options.restartEpoch,
      }),
    );
    try {
      if (options.baseIdPath) writeBaseIdFile(options.baseIdPath, baseId);
    } catch (e) {
      bound.close();
      throw e;
    }
    return new DomainSocketHotRestart(baseId, bound, new ChildEndpoint(bound.child), log);
  }

  async shutdownParentAdmin(): Promise<number | null> {
    if (this.parentGone) return null;
    try {
      return (await this.child.shutdownParentAdmin())?.originalStartTimeUnixSeconds ?? null;
    } catch (e) {
      this.parentLost('shutdown_admin', e);
      return null;
    }
  }

  async duplicateParentListenSocket(address: string, workerIndex: number | null): Promise<number | null> {
    if (this.parentGone) return null;
    try {
      return await this.child.duplicateParentListenSocket(address, workerIndex);
    } catch (e) {
      this.parentLost(`pass_listen_socket ${address}`, e);
      return null;
    }
  }

  drainParentListeners(): void {
    if (this.parentGone) return;
    try {
      this.child.drainParentListeners();
    } catch (e) {
      this.parentLost('drain_listeners', e);
    }
  }

  terminateParent(): void {
    if (this.parentGone) return;
    try {
      this.child.terminateParent();
    } catch (e) {
      this.parentLost('terminate', e);
    }
  }

  serveChild(handlers: ParentHandlers): void {
    this.parentEndpoint = new ParentEndpoint(this.sockets.parent, handlers, this.log);
    this.parentEndpoint.start();
  }

  close(): void {
    this.parentEndpoint?.stop();
    this.sockets.close();
  }

  private parentLost(request: string, e: unknown): void {
    if (!(e instanceof HotRestartError)) throw e;
    this.parentGone = true;
    this.log.warn(`hot restart: the parent epoch did not answer ${request} (${e.message}); continuing without it`);
  }
}
