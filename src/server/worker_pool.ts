// The supervisor's workers: start them on the listen sockets, restart a dead one with backoff
// (its gauge contributions zeroed, its counters kept), and stop them all on shutdown.

import type { ChildProcess } from 'node:child_process';
import type { LoggerLevel } from '../log/log_manager';
import type { Logger } from '../log/logger_api';
import type { Counter } from '../stats/stats';
import type { ListenerConfig } from '../config/model';
import { type ListenSockets, workerListenSocket } from '../listener/listen_sockets';
import { BackoffPolicy, nextRestartDelay } from './backoff';
import { ListenSocketSender } from './listen_socket_handoff';
import { ListenerChangeQueue } from './listener_change_queue';
import { forkWorker } from './worker_launch';
import { isMessage, SupervisorMessage, WorkerFileLoggers, WorkerInit, WorkerMemory, WorkerMessage, WorkerStart, WORKER_PROTOCOL_VERSION } from './worker_protocol';

export interface WorkerPoolDeps {
  readonly count: number;
  readonly columns: readonly number[];
  /** The listen sockets the worker of that index, started now, serves (those /drain_listeners stopped are gone). */
  readonly listeners: (workerIndex: number) => readonly ListenSocket[];
  /** A worker's init: its bootstrap, log, region column and the like (see WorkerInit). */
  readonly init: (workerIndex: number, column: number) => WorkerInit;
  /** The clusters' state workers start from now (encodeWorkerClusterState), made once per start or restart. */
  readonly clusterState: () => Uint8Array;
  /**
   * @param listeners the names of the sockets the worker was just handed, in the order sent
   * @param clusters what `clusterState()` made for the workers starting now
   */
  readonly start: (listeners: readonly string[], clusters: Uint8Array) => WorkerStart;
  /** Clears a dead worker's gauge contributions (its column, and what it reported) before its replacement starts. */
  readonly onWorkerGone: (column: number, workerIndex: number) => void;
  readonly restarts: Counter;
  readonly backoff: BackoffPolicy;
  readonly log: Logger;
  /** How long a worker may take to close its connections on shutdown before SIGKILL. */
  readonly stopTimeoutMs: number;
  /** A worker's message other than ready and fatal (e.g. its contention reports). */
  readonly onMessage: (m: WorkerMessage) => void;
  /** The listeners LDS brought, with their sockets: every worker gets them once it serves. */
  readonly dynamicListeners: () => readonly DynamicListenSocket[];
}

/** A listener LDS brought and its listen sockets, of which a worker is handed its own when it serves. */
export interface DynamicListenSocket {
  readonly config: ListenerConfig;
  readonly sockets: ListenSockets;
}

/** One worker's answer to ask(): null when it was not running, gave none in time or exited. */
export interface WorkerReply<R> {
  readonly index: number;
  readonly reply: R | null;
}

export interface ListenSocket {
  readonly name: string;
  readonly fd: number;
}

export class WorkerStartError extends Error {}

interface Slot {
  readonly index: number;
  readonly column: number;
  child: ChildProcess | null;
  /** The child has its init: admin requests and runtime, health and log changes may go to it. */
  initialized: boolean;
  /** The child has its start: cluster changes may go to it (the start's state includes earlier ones). */
  started: boolean;
  /** The child is ready (its handoff socket bound): LDS's listeners may go to it. */
  serving: boolean;
  /** The child has interned its share of the clusters' stat names, which it does once it serves. */
  declared: boolean;
  startedAt: number;
  restartDelayMs: number;
  restartTimer: NodeJS.Timeout | null;
  /** LDS's changes for the current child, in order; null while none runs. */
  listenerChanges: ListenerChangeQueue | null;
}

/** Messages that change the clusters, RDS's routes or SDS secrets: a worker gets them once started, its start state being older. */
const CLUSTER_CHANGES: ReadonlySet<SupervisorMessage['type']> = new Set(['cluster_update', 'cluster_add', 'cluster_remove', 'route_config', 'secret']);
/** LDS's changes: a worker gets them once ready, when it is handed every listener LDS has brought so far. */
const LISTENER_CHANGES: ReadonlySet<SupervisorMessage['type']> = new Set(['listener_add', 'listener_update', 'listener_remove']);

export class WorkerPool {
  private readonly slots: Slot[];
  private readonly log: Logger;
  /** Set by drain() and stop(): a worker that dies now is not replaced. */
  private stopping = false;
  /** The last request id `ask` gave out: each request's replies name it. */
  private lastRequestId = 0;
  /** Hands LDS's listen sockets to running workers. */
  private readonly handoff = new ListenSocketSender();
  /** statNamesDeclared()'s callers, until no worker is declaring. */
  private declaredWaiters: (() => void)[] = [];

  constructor(private readonly deps: WorkerPoolDeps) {
    this.log = deps.log.forFile(__filename);
    this.slots = Array.from({ length: deps.count }, (_, index) => ({
      index,
      column: deps.columns[index]!,
      child: null,
      initialized: false,
      started: false,
      serving: false,
      declared: false,
      startedAt: 0,
      restartDelayMs: 0,
      restartTimer: null,
      listenerChanges: null,
    }));
  }

  /**
   * Sends the workers their init at once, and their start once `ready` resolves: a worker
   * decodes the bootstrap and interns its stat names while the supervisor initializes the
   * clusters. Resolves when every worker has adopted its listeners; rejects if one fails to
   * start, or with `ready`'s error (the workers killed).
   * @param forked processes forkWorker made earlier, which have been loading their code since:
   *   one per worker, in order; a worker without one is forked now
   */
  async start(ready: Promise<void>, forked: readonly ChildProcess[]): Promise<void> {
    const clusters = ready.then(() => this.deps.clusterState());
    await Promise.all(this.slots.map((slot) => this.spawn(slot, clusters, forked[slot.index])));
  }

  pids(): number[] {
    return this.slots.flatMap((s) => (s.child?.pid !== undefined ? [s.child.pid] : []));
  }

  /** The epoch is being replaced: every worker stops accepting and drains its connections. */
  drain(): void {
    this.stopping = true;
    for (const slot of this.slots) if (slot.restartTimer) clearTimeout(slot.restartTimer);
    this.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'drain' });
  }

  /** Sends `m` to every running worker. */
  broadcast(m: SupervisorMessage): void {
    for (const slot of this.slots) {
      if (LISTENER_CHANGES.has(m.type)) {
        // Behind the listeners still being handed over to it.
        if (slot.serving) slot.listenerChanges?.send(m);
        continue;
      }
      const ready = CLUSTER_CHANGES.has(m.type) ? slot.started : slot.initialized;
      if (slot.child?.connected && ready) slot.child.send(m);
    }
  }

  /**
   * Settles once no started worker is still interning its share of the clusters' stat names
   * (a worker that died meanwhile is not waited for: its replacement declares them again).
   */
  statNamesDeclared(): Promise<void> {
    if (!this.declaring()) return Promise.resolve();
    return new Promise((resolve) => this.declaredWaiters.push(resolve));
  }

  private declaring(): boolean {
    return this.slots.some((slot) => slot.child !== null && slot.started && !slot.declared);
  }

  private settleDeclared(): void {
    if (this.declaring()) return;
    const waiters = this.declaredWaiters;
    this.declaredWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** A listener LDS brought on a new address: every serving worker is handed its socket, then told. */
  addListener(listener: DynamicListenSocket): void {
    for (const slot of this.slots) if (slot.serving) slot.listenerChanges?.addListener(listener.config, workerListenSocket(listener.sockets, slot.index));
  }

  /** The supervisor closes `fd` (its listener is gone): no worker is handed it afterwards. */
  forgetListenSocket(fd: number): void {
    for (const slot of this.slots) slot.listenerChanges?.forgetSocket(fd);
  }

  /** The queue of LDS changes for `child`, whose handoff socket is bound once it is ready. */
  private listenerChangeQueue(slot: Slot, child: ChildProcess): ListenerChangeQueue {
    return new ListenerChangeQueue({
      sendSocket: (name, fd) => this.handoff.send(child.pid!, name, fd),
      sendMessage: (message) => {
        if (!child.connected) return false;
        child.send(message);
        return true;
      },
      onHandoffError: (name, error) => this.log.error(`worker ${slot.index}: cannot hand over the socket of listener '${name}': ${error.message}`),
    });
  }

  /**
   * Sends every worker `make(id)`, a request under a fresh id, and resolves once each has answered
   * (a message `isReply` accepts for that id), exited, or let `timeoutMs` pass: a worker that dies
   * meanwhile never holds it up.
   */
  ask<R extends WorkerMessage>(
    make: (id: number) => SupervisorMessage,
    isReply: (m: WorkerMessage, id: number) => m is R,
    timeoutMs: number,
  ): Promise<WorkerReply<R>[]> {
    const id = ++this.lastRequestId;
    const request = make(id);
    return Promise.all(
      this.slots.map((slot) => {
        const child = slot.child;
        if (!slot.initialized || !child?.connected) return { index: slot.index, reply: null };
        return new Promise<WorkerReply<R>>((resolve) => {
          const done = (reply: R | null) => {
            clearTimeout(timer);
            child.off('message', onMessage);
            child.off('exit', onExit);
            resolve({ index: slot.index, reply });
          };
          const onMessage = (m: unknown) => {
            if (isMessage<WorkerMessage>(m) && isReply(m, id)) done(m);
          };
          const onExit = () => done(null);
          const timer = setTimeout(() => done(null), timeoutMs);
          child.on('message', onMessage);
          child.once('exit', onExit);
          child.send(request);
        });
      }),
    );
  }

  /** Every running worker's process.memoryUsage(); one that does not answer in time is left out. */
  async memoryUsage(timeoutMs: number): Promise<NodeJS.MemoryUsage[]> {
    const replies = await this.ask(
      (id) => ({ v: WORKER_PROTOCOL_VERSION, type: 'memory_request', id }),
      (m, id): m is WorkerMemory => m.type === 'memory' && m.id === id,
      timeoutMs,
    );
    return replies.flatMap((r) => (r.reply === null ? [] : [r.reply.usage]));
  }

  /** Every running worker's file loggers (fine-grain logging); one that does not answer in time is left out. */
  async fileLoggers(timeoutMs: number): Promise<(readonly LoggerLevel[])[]> {
    const replies = await this.ask(
      (id) => ({ v: WORKER_PROTOCOL_VERSION, type: 'file_loggers_request', id }),
      (m, id): m is WorkerFileLoggers => m.type === 'file_loggers' && m.id === id,
      timeoutMs,
    );
    return replies.flatMap((r) => (r.reply === null ? [] : [r.reply.loggers]));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      this.slots.map((slot) => {
        if (slot.restartTimer) clearTimeout(slot.restartTimer);
        const child = slot.child;
        if (!child || child.exitCode !== null || child.signalCode !== null) return undefined;
        return new Promise<void>((resolve) => {
          const kill = setTimeout(() => child.kill('SIGKILL'), this.deps.stopTimeoutMs);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          const bye: SupervisorMessage = { v: WORKER_PROTOCOL_VERSION, type: 'shutdown' };
          if (slot.initialized && child.connected) child.send(bye);
          else child.kill('SIGTERM');
        });
      }),
    );
    this.handoff.close();
  }

  private spawn(slot: Slot, clusters: Promise<Uint8Array>, child: ChildProcess = forkWorker()): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) {
      return Promise.reject(new WorkerStartError(`worker ${slot.index} exited during start (code ${child.exitCode}, signal ${child.signalCode})`));
    }
    slot.child = child;
    slot.started = false;
    slot.serving = false;
    slot.startedAt = Date.now();
    this.log.info(`worker ${slot.index} starting as pid ${child.pid}`);
    child.send(this.deps.init(slot.index, slot.column));
    slot.initialized = true;
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      let onReceiving: () => void = () => undefined;
      const receiving = new Promise<void>((r) => (onReceiving = r));
      child.on('message', (m: unknown) => {
        if (!isMessage<WorkerMessage>(m)) return;
        if (m.type === 'receiving') {
          onReceiving();
        } else if (m.type === 'ready' && !ready) {
          ready = true;
          slot.serving = true;
          for (const listener of this.deps.dynamicListeners()) {
            slot.listenerChanges?.addListener(listener.config, workerListenSocket(listener.sockets, slot.index));
          }
          resolve();
        } else if (m.type === 'stat_names_declared') {
          slot.declared = true;
          this.settleDeclared();
        } else if (m.type === 'fatal') {
          this.log.critical(`worker ${slot.index} (pid ${child.pid}): ${m.message}`);
          if (!ready) reject(new WorkerStartError(`worker ${slot.index} failed to start: ${m.message}`));
        } else if (m.type !== 'ready') {
          this.deps.onMessage(m);
        }
      });
      child.on('error', (e) => this.log.error(`worker ${slot.index}: ${e.message}`));
      child.once('exit', (code, signal) => {
        slot.child = null;
        slot.serving = false;
        slot.listenerChanges?.clear();
        slot.listenerChanges = null;
        this.settleDeclared();
        this.deps.onWorkerGone(slot.column, slot.index);
        if (!ready) {
          reject(new WorkerStartError(`worker ${slot.index} exited during start (code ${code}, signal ${signal})`));
          return;
        }
        if (this.stopping) return;
        this.log.error(`worker ${slot.index} (pid ${child.pid}) died (code ${code}, signal ${signal}); restarting`);
        this.scheduleRestart(slot);
      });
      Promise.all([clusters, receiving]).then(
        ([bytes]) => {
          if (slot.child !== child || !child.connected) return;
          // Stopped or drained before its start: it goes, and its start fails (the exit handler).
          if (this.stopping) {
            child.kill('SIGTERM');
            return;
          }
          // The start, then its sockets: the worker reads each as it builds its listeners, so
          // more of them than the kernel queues per socket (net.unix.max_dgram_qlen, 10) go through.
          const listeners = this.deps.listeners(slot.index);
          const changes = (slot.listenerChanges = this.listenerChangeQueue(slot, child));
          slot.started = true;
          slot.declared = false;
          changes.send(this.deps.start(listeners.map((l) => l.name), bytes));
          for (const listener of listeners) changes.handOver(listener.name, listener.fd);
        },
        (error: Error) => {
          reject(error);
          child.kill('SIGTERM');
        },
      );
    });
  }

  private scheduleRestart(slot: Slot): void {
    slot.restartDelayMs = nextRestartDelay(this.deps.backoff, slot.restartDelayMs, Date.now() - slot.startedAt);
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = null;
      if (this.stopping) return;
      this.deps.restarts.inc();
      this.spawn(slot, Promise.resolve(this.deps.clusterState())).catch((e: Error) => {
        this.log.error(e.message);
        if (!this.stopping && !slot.child) this.scheduleRestart(slot);
      });
    }, slot.restartDelayMs);
  }
}
