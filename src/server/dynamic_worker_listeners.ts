// A worker's listeners from LDS: each is built with a drain of its own (besides the process's,
// which a hot restart starts), served on the socket the supervisor handed over, swapped onto the
// same socket when changed, and drained when replaced or removed, as Envoy's per-listener drain
// managers do. A listener the worker cannot build is counted and logged; the worker serves on.

import type { Clock } from '../common/clock';
import type { ListenerConfig } from '../config/model';
import { DrainManager, type DrainStrategy } from '../hot_restart/drain_manager';
import { ListenSocket } from '../listener/listen_socket';
import type { ListenerDrain, ListenerManager } from '../listener/listener_manager';
import type { KeptChain } from '../listener/lds_update_plan';
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
  private readonly log: Logger;

  constructor(private readonly deps: DynamicWorkerListenersDeps) {
    this.log = deps.log.forFile(__filename);
    this.createSuccess = deps.stats.counter('listener_manager.listener_create_success');
    this.createFailure = deps.stats.counter('listener_manager.listener_create_failure');
  }

  /** A listener on a new address: its socket is waiting in the handoff socket. */
  add(config: ListenerConfig): void {
    let server: ListenSocket | null = null;
    try {
      server = new ListenSocket(this.deps.receiver.receive(config.name), this.deps.retryMs);
      const drains = this.drains(config);
      this.deps.listeners.addListener(config, server, this.build(config, server, drains), drains);
      this.createSuccess.inc();
    } catch (error) {
      server?.close();
      this.failed(config, error as Error);
    }
  }

  /**
   * A changed listener on the address it had: the same socket, new filter chains.
   * @param keptChains the old chains kept, with their connections and drains (a change of filter chains only)
   */
  update(config: ListenerConfig, keptChains: readonly KeptChain[]): void {
    const serving = this.deps.listeners.serving(config.name);
    if (serving === null) {
      this.failed(config, new Error('no listener of that name serves here'));
      return;
    }
    try {
      const drains: ListenerDrain[] = this.drains(config);
      for (const { previous, next } of keptChains) drains[next] = serving.chainDrains[previous]!;
      const filter = this.build(config, serving.server, drains).keeping(serving.filter, keptChains);
      this.deps.listeners.replaceListener(config, filter, drains, new Set(keptChains.map((k) => k.previous)));
      this.createSuccess.inc();
    } catch (error) {
      this.failed(config, error as Error);
    }
  }

  remove(name: string): void {
    if (this.deps.listeners.removeListener(name)) this.log.info(`listener '${name}' removed: draining its connections`);
  }

  close(): void {
    this.deps.receiver.close();
  }

  /** One per filter chain: a change that keeps some chains drains the others only. */
  private drains(config: ListenerConfig): DrainManager[] {
    return config.filterChains.map(() => new DrainManager(this.deps.drainOptions));
  }

  private build(config: ListenerConfig, server: ListenSocket, drains: readonly ListenerDrain[]) {
    const filter = this.deps.filters.dynamicListenerFilter(config, server.address(), (chain) => eitherDrains(this.deps.processDrain, drains[chain]!));
    this.deps.certificates.add(filter.tlsContexts);
    return filter;
  }

  private failed(config: ListenerConfig, error: Error): void {
    this.createFailure.inc();
    this.log.error(`listener '${config.name}' cannot be created: ${error.message}`);
  }
}
