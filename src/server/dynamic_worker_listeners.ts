// A worker's listeners from LDS: each is built with a drain of its own (besides the process's,
// which a hot restart starts), served on the socket the supervisor handed over, swapped onto the
// same socket when changed, and drained when replaced or removed, as Envoy's per-listener drain
// managers do. A listener the worker cannot build is counted and logged; the worker serves on.

import type { Clock } from '../common/clock';
import type { ListenerConfig } from '../config/model';
import { DrainManager, type DrainStrategy } from '../hot_restart/drain_manager';
import { ListenSocket } from '../listener/listen_socket';
import type { ListenerManager } from '../listener/listener_manager';
import type { NetworkFilterBuilder } from '../listener/network_filter_builder';
import type { Logger } from '../log/logger_api';
import type { Counter, StatsStore } from '../stats/stats';
import type { CertificateWatcher } from '../tls/certificate_watcher';
import { eitherDrains, type DrainDecider } from './drain_decider';
import type { ListenSocketReceiver } from './listen_socket_handoff';

export interface DynamicWorkerListenersDeps {
  readonly listeners: ListenerManager;
  readonly filters: NetworkFilterBuilder;
  readonly receiver: ListenSocketReceiver;
  /** The process's drain (hot restart, /healthcheck/fail): a dynamic listener heeds it too. */
  readonly processDrain: DrainDecider;
  readonly drainOptions: { readonly strategy: DrainStrategy; readonly drainTimeS: number; readonly clock: Clock };
  /** Reloads the listeners' certificates when their files change. */
  readonly certificates: CertificateWatcher;
  readonly stats: StatsStore;
  /** After a failed accept(), when to try again. */
  readonly retryMs: number;
  readonly log: Logger;
}

export class DynamicWorkerListeners {
  private readonly createSuccess: Counter;
  private readonly createFailure: Counter;

  constructor(private readonly deps: DynamicWorkerListenersDeps) {
    this.createSuccess = deps.stats.counter('listener_manager.listener_create_success');
    this.createFailure = deps.stats.counter('listener_manager.listener_create_failure');
  }

  /** A listener on a new address: its socket is waiting in the handoff socket. */
  add(config: ListenerConfig): void {
    let server: ListenSocket | null = null;
    try {
      server = new ListenSocket(this.deps.receiver.receive(config.name), this.deps.retryMs);
      const drain = this.drain();
      this.deps.listeners.addListener(config, server, this.build(config, server, drain), drain);
      this.createSuccess.inc();
    } catch (error) {
      server?.close();
      this.failed(config, error as Error);
    }
  }

  /** A changed listener on the address it had: the same socket, new filter chains. */
  update(config: ListenerConfig): void {
    const server = this.deps.listeners.socketOf(config.name);
    if (server === null) {
      this.failed(config, new Error('no listener of that name serves here'));
      return;
    }
    try {
      const drain = this.drain();
      this.deps.listeners.replaceListener(config, this.build(config, server, drain), drain);
      this.createSuccess.inc();
    } catch (error) {
      this.failed(config, error as Error);
    }
  }

  remove(name: string): void {
    if (this.deps.listeners.removeListener(name)) this.deps.log.info(`listener '${name}' removed: draining its connections`);
  }

  close(): void {
    this.deps.receiver.close();
  }

  private drain(): DrainManager {
    return new DrainManager(this.deps.drainOptions);
  }

  private build(config: ListenerConfig, server: ListenSocket, drain: DrainManager) {
    const filter = this.deps.filters.dynamicListenerFilter(config, server.address(), eitherDrains(this.deps.processDrain, drain));
    this.deps.certificates.add(filter.tlsContexts);
    return filter;
  }

  private failed(config: ListenerConfig, error: Error): void {
    this.createFailure.inc();
    this.deps.log.error(`listener '${config.name}' cannot be created: ${error.message}`);
  }
}
