// The listener discovery service client (Envoy's LdsApiImpl with the listener manager's part):
// one wildcard subscription to Listener resources. Each listener is checked exactly as a static
// one, built as a worker would build it, and bound here; it warms (its RDS subscriptions' first
// updates), then is handed to every worker; a changed one on the same address keeps its socket,
// and what it replaces drains in the workers. As in
// Envoy 1.16, the good listeners of an update apply and the bad ones reject (NACK) it.

import type { ConfigExtensions } from '../config/extension';
import type { ConfigSourceConfig } from '../config/config_source';
import { loadListenerResource, rebaseListenerError } from '../config/listener_resource';
import type { Bootstrap, ListenerConfig, SocketAddress } from '../config/model';
import { isJsonObject, type JsonObject } from '../config/json';
import { addressString } from '../network/socket_address';
import { LISTENER_RESOURCE } from '../config/xds/resource_types';
import { checkBootstrapSubscriptions } from '../config/xds/subscription_preconditions';
import type { ConfigUpdateFailureReason, DecodedResource, Subscription, SubscriptionCallbacks } from '../config/xds/subscription';
import { SubscriptionStats } from '../config/xds/subscription';
import type { SubscriptionFactory } from '../config/xds/subscription_factory';
import type { Clock, TimeoutHandle } from '../common/clock';
import type { Logger } from '../log/logger_api';
import type { Counter, Gauge, StatsStore } from '../stats/stats';
import type { ListenSockets } from './listen_sockets';
import { type CurrentListener, type KeptChain, keptFilterChains, type ListenerCandidate, planListenerUpdate } from './lds_update_plan';

/** A listener LDS brought, as an update made it. */
export interface ListenerVersion extends CurrentListener {
  readonly config: ListenerConfig;
  readonly source: JsonObject;
  readonly versionInfo: string;
  readonly lastUpdated: Date;
}

/** A listener LDS brought that serves now, with the sockets the supervisor holds for it. */
export interface DynamicListener extends ListenerVersion {
  /** The supervisor's copies of the listen sockets: what workers started later and the next epoch get. */
  readonly sockets: ListenSockets;
  /** The bound address (a port 0 listener's real port). */
  readonly bound: SocketAddress;
}

/** A listener the last update refused (Envoy's UpdateFailureState). */
export interface ListenerErrorState {
  readonly name: string;
  readonly details: string;
  /** The resource refused. */
  readonly failedConfiguration: JsonObject;
  readonly lastUpdateAttempt: Date;
}

/** A listener waiting for what it needs before it takes traffic. */
interface WarmingListener {
  readonly listener: ListenerVersion;
  /** A new listener's sockets, until it serves; handed on to a later version of it that warms in its place. */
  sockets: ListenSockets | null;
}

/** What LDS does with sockets and workers. */
export interface ListenerSockets {
  /** The listen sockets for the listener's address (one, or with reuse_port one per worker): the previous epoch's, or fresh ones. */
  bind(config: ListenerConfig): Promise<ListenSockets>;
  close(sockets: ListenSockets): void;
  /** Every worker serving and those started later: a listener on new sockets. */
  add(config: ListenerConfig, sockets: ListenSockets): void;
  /** Every worker: the listener of that name takes these filter chains on its socket; the old ones drain but the kept. */
  update(config: ListenerConfig, keptChains: readonly KeptChain[]): void;
  /** Every worker: the listener stops accepting and drains. */
  remove(name: string): void;
}

export interface LdsApiDeps {
  /** dynamic_resources.lds_config. */
  readonly source: ConfigSourceConfig;
  readonly subscriptions: SubscriptionFactory;
  /** The serving bootstrap: its static listeners, and what a resource is checked in. */
  readonly bootstrap: Bootstrap;
  readonly extensions: ConfigExtensions;
  /** --disable-extensions, resolved. */
  readonly disabledExtensions: ReadonlySet<string>;
  /** --service-cluster, for the checks of a static listener that read the start-up runtime. */
  readonly serviceCluster: string;
  /** The cluster manager's clusters of the moment (CDS's among them): an inline route may name any, as in Envoy. */
  readonly activeClusters: () => ReadonlySet<string>;
  /** Builds the listener's data plane as a worker would: `static_resources.listeners[0]` of that bootstrap. */
  readonly buildCheck: (bootstrap: Bootstrap) => void;
  /** Settles once what the listener (`static_resources.listeners[0]` of that bootstrap) waits for has come: its RDS's first updates. */
  readonly warm: (bootstrap: Bootstrap) => Promise<void>;
  /**
   * Subscribes to the SDS secrets the listener's TLS contexts name (`static_resources.listeners[0]`
   * of that bootstrap); throws a FieldError under that path for an unknown static secret.
   */
  readonly registerSecrets: (bootstrap: Bootstrap) => void;
  readonly sockets: ListenerSockets;
  /** The root scope: `listener_manager.*`. */
  readonly stats: StatsStore;
  /** --drain-time-s: how long a removed or replaced listener counts as draining. */
  readonly drainTimeS: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** The wall clock of last_updated (/config_dump). */
  readonly now?: () => Date;
}

interface LoadedCandidate extends ListenerCandidate {
  readonly config: ListenerConfig;
  /** The bootstrap it was checked in, as its only listener. */
  readonly bootstrap: Bootstrap;
  readonly source: JsonObject;
  readonly version: string;
}

export class LdsApi implements SubscriptionCallbacks {
  private subscription: Subscription | null = null;
  private readonly listeners = new Map<string, DynamicListener>();
  private version = '';
  private closed = false;
  private readonly log: Logger;
  private initialize: (() => void) | null = null;
  /** Set by /drain_listeners: LDS's listeners of these directions are stopped, and no more are added. */
  private stopped: 'all' | 'inbound' | null = null;
  /** The listener warming under each name: a later update or a removal abandons it. */
  private readonly warming = new Map<string, WarmingListener>();
  /** The listeners the last update refused, by name (Envoy's error states). */
  private readonly errors = new Map<string, ListenerErrorState>();
  /** The listeners replaced or removed whose connections drain, by the end of their drain. */
  private readonly drainingListeners = new Map<TimeoutHandle, DynamicListener>();
  private readonly counters: Record<'added' | 'modified' | 'removed', Counter>;
  private readonly active: Gauge;
  private readonly drainingGauge: Gauge;
  private readonly warmingGauge: Gauge;
  /** Settles at the first update, or the first failure (timed out, rejected): the server then serves. */
  readonly initialized: Promise<void>;

  constructor(private readonly deps: LdsApiDeps) {
    this.log = deps.log.forFile(__filename);
    this.initialized = new Promise((resolve) => (this.initialize = resolve));
    const scope = deps.stats.scope('listener_manager');
    this.counters = { added: scope.counter('listener_added'), modified: scope.counter('listener_modified'), removed: scope.counter('listener_removed') };
    this.active = scope.gauge('total_listeners_active');
    this.drainingGauge = scope.gauge('total_listeners_draining');
    this.warmingGauge = scope.gauge('total_listeners_warming');
    this.active.set(deps.bootstrap.listeners.length);
  }

  start(): void {
    const stats = new SubscriptionStats(this.deps.stats.scope('listener_manager.lds'));
    this.subscription = this.deps.subscriptions.subscribe(this.deps.source, LISTENER_RESOURCE, this, stats);
    // Every listener there is: LDS is a wildcard subscription.
    this.subscription.start([]);
  }

  /** The version_info of the last update anything was applied from; '' before the first. */
  versionInfo(): string {
    return this.version;
  }

  /** The listeners LDS brought that serve now, in the order they came. */
  serving(): DynamicListener[] {
    return [...this.listeners.values()];
  }

  close(): void {
    this.closed = true;
    this.subscription?.close();
    this.subscription = null;
    for (const timer of this.drainingListeners.keys()) this.deps.clock.clearTimeout(timer);
    for (const listener of this.listeners.values()) this.deps.sockets.close(listener.sockets);
    this.listeners.clear();
    for (const warming of this.warming.values()) {
      if (warming.sockets !== null) this.deps.sockets.close(warming.sockets);
      warming.sockets = null;
    }
    this.warming.clear();
    this.initializeOnce();
  }

  async onConfigUpdate(resources: readonly DecodedResource[], versionInfo: string): Promise<void> {
    const { bootstrap, sockets } = this.deps;
    const lastUpdated = (this.deps.now ?? (() => new Date()))();
    // As Envoy's, the error states shown are those of the last update.
    this.errors.clear();
    const refuse = (name: string, reason: string, resource: JsonObject) => this.errors.set(name, { name, details: reason, failedConfiguration: resource, lastUpdateAttempt: lastUpdated });
    const names = new Set<string>();
    const candidates: LoadedCandidate[] = [];
    resources.forEach(({ name, resource, version, path }, i) => {
      try {
        if (names.has(name)) throw new Error(`duplicate listener ${name} found`);
        names.add(name);
        candidates.push(this.load(resource, path ?? `resources[${i}]`, version ?? versionInfo));
      } catch (error) {
        refuse(name, (error as Error).message, resource);
      }
    });
    // As Envoy's, an update adds nothing in a direction /drain_listeners stopped, and says nothing of it.
    const plan = planListenerUpdate(
      bootstrap.listeners,
      this.listeners,
      names,
      candidates.filter((c) => !this.isStopped(c.config)),
    );
    for (const { name, reason } of plan.errors) refuse(name, reason, candidates.find((c) => c.name === name)!.source);
    let applied = false;
    for (const name of plan.removed) {
      this.warming.delete(name);
      this.remove(name);
      this.counters.removed.inc();
      applied = true;
    }
    // A listener still warming that the update no longer has goes too (its warming closes its socket).
    for (const name of [...this.warming.keys()]) {
      if (names.has(name) || this.listeners.has(name)) continue;
      this.warming.delete(name);
      this.counters.removed.inc();
      applied = true;
    }
    this.active.set(bootstrap.listeners.length + this.listeners.size);
    this.warmingGauge.set(this.warming.size);
    const warmed: Promise<void>[] = [];
    for (const candidate of [...plan.modified, ...plan.added]) {
      let socket: ListenSockets | null = null;
      const warming = this.warming.get(candidate.name);
      // A new listener's sockets are bound before it warms, as Envoy binds them: sockets that cannot
      // be had reject the update. One changed while it warms keeps the sockets it had, if bound alike.
      if (warming?.sockets != null && addressString(warming.listener.address) === addressString(candidate.address)) {
        if (warming.sockets.reusePort === candidate.config.reusePort) socket = warming.sockets;
        else sockets.close(warming.sockets);
        warming.sockets = null;
      }
      if (socket === null && !this.listeners.has(candidate.name)) {
        try {
          socket = await sockets.bind(candidate.config);
        } catch (error) {
          refuse(candidate.name, `cannot bind '${candidate.address.address}:${candidate.address.port}': ${(error as Error).message}`, candidate.source);
          continue;
        }
        if (this.closed) {
          sockets.close(socket);
          return;
        }
      }
      this.counters[this.listeners.has(candidate.name) || warming !== undefined ? 'modified' : 'added'].inc();
      applied = true;
      warmed.push(this.warmThenServe(candidate, socket, lastUpdated));
    }
    if (applied) this.version = versionInfo;
    this.log.info(`lds: ${plan.added.length} added, ${plan.modified.length} modified, ${plan.removed.length} removed, ${this.errors.size} refused`);
    // The server's first start waits for the first update's listeners to warm, as Envoy's does.
    void Promise.all(warmed).then(() => this.initializeOnce());
    if (this.errors.size > 0) {
      throw new Error(`Error adding/updating listener(s) ${[...this.errors.values()].map((e) => `${e.name}: ${e.details}`).join(', ')}`);
    }
  }

  /**
   * Warming: the listener's RDS subscriptions' first updates (or failures); then it takes the
   * place of the one of its name in the workers, unless a later update or a removal came meanwhile.
   * @param bound a new listener's sockets; null for a change, which keeps the sockets it serves on
   */
  private async warmThenServe(candidate: LoadedCandidate, bound: ListenSockets | null, lastUpdated: Date): Promise<void> {
    const entry: WarmingListener = { listener: this.serve(candidate, lastUpdated), sockets: bound };
    this.warming.set(candidate.name, entry);
    this.warmingGauge.set(this.warming.size);
    await this.deps.warm(candidate.bootstrap);
    const current = this.warming.get(candidate.name) === entry;
    if (current) this.warming.delete(candidate.name);
    this.warmingGauge.set(this.warming.size);
    // A later version may have taken the socket over.
    const socket = entry.sockets;
    const serving = this.listeners.get(candidate.name);
    if (!current || this.closed || (socket === null && serving === undefined)) {
      if (socket !== null) this.deps.sockets.close(socket);
      return;
    }
    if (serving !== undefined) {
      this.listeners.set(candidate.name, { ...this.serve(candidate, lastUpdated), sockets: serving.sockets, bound: serving.bound });
      this.deps.sockets.update(candidate.config, keptFilterChains(serving.source, candidate.source));
      this.startDraining(serving);
    } else {
      this.listeners.set(candidate.name, { ...this.serve(candidate, lastUpdated), sockets: socket!, bound: { ...candidate.address, port: socket!.port } });
      this.deps.sockets.add(candidate.config, socket!);
    }
    this.active.set(this.deps.bootstrap.listeners.length + this.listeners.size);
  }

  /** The server starts with its static listeners rather than not at all, as Envoy's does. */
  onConfigUpdateFailed(reason: ConfigUpdateFailureReason, error: Error | null): void {
    if (reason === 'fetch_timeout') this.log.warn('lds: initial fetch timed out; starting without the listeners it would bring');
    else if (error !== null) this.log.warn(`lds: update failed (${reason}): ${error.message}`);
    this.initializeOnce();
  }

  /** The checks of a static listener, then the build a worker does. @throws FieldError under `path` */
  private load(resource: JsonObject, path: string, version: string): LoadedCandidate {
    const { extensions, disabledExtensions, serviceCluster, bootstrap } = this.deps;
    const source = isJsonObject(bootstrap.source) ? bootstrap.source : {};
    const loaded = loadListenerResource(resource, path, source, disabledExtensions, extensions, serviceCluster, this.deps.activeClusters());
    try {
      // A connection manager's rds needs what a static one's does: the node's identity, a file that exists.
      checkBootstrapSubscriptions(loaded.bootstrap, bootstrap.node);
      this.deps.buildCheck(loaded.bootstrap);
      // Its SDS secrets are subscribed to once it is known good; it warms until they come.
      this.deps.registerSecrets(loaded.bootstrap);
    } catch (error) {
      throw rebaseListenerError(error, path);
    }
    const { config } = loaded;
    return {
      name: config.name,
      content: JSON.stringify(loaded.source),
      address: config.address,
      reusePort: config.reusePort,
      config,
      bootstrap: loaded.bootstrap,
      source: loaded.source,
      version,
    };
  }

  private serve(candidate: LoadedCandidate, lastUpdated: Date): ListenerVersion {
    const { name, content, address, reusePort, config, source, version } = candidate;
    return { name, content, address, reusePort, config, source, versionInfo: version, lastUpdated };
  }

  private remove(name: string): void {
    const listener = this.listeners.get(name);
    if (listener === undefined) return;
    this.listeners.delete(name);
    this.deps.sockets.remove(name);
    this.deps.sockets.close(listener.sockets);
    this.startDraining(listener);
  }

  /** A listener's connections drain in the workers for --drain-time-s. */
  private startDraining(listener: DynamicListener): void {
    this.drainingGauge.inc();
    const timer = this.deps.clock.setTimeout(() => {
      this.drainingListeners.delete(timer);
      this.drainingGauge.dec();
    }, this.deps.drainTimeS * 1000);
    this.drainingListeners.set(timer, listener);
  }

  /**
   * /drain_listeners: the listeners of LDS (all, or the INBOUND ones) leave the set, their
   * sockets closed here (the workers close theirs as they stop them), and from now on an update
   * adds or changes none of that direction, as Envoy's listener manager does.
   * @returns the names of those stopped, which the workers are told to stop
   */
  stopListeners(inboundOnly: boolean): string[] {
    this.stopped = inboundOnly && this.stopped !== 'all' ? 'inbound' : 'all';
    const stopped = [...this.listeners.values()].filter((l) => this.isStopped(l.config));
    for (const listener of stopped) {
      this.listeners.delete(listener.name);
      this.warming.delete(listener.name);
      this.deps.sockets.close(listener.sockets);
    }
    for (const [name, warming] of this.warming) if (this.isStopped(warming.listener.config)) this.warming.delete(name);
    this.active.set(this.deps.bootstrap.listeners.length + this.listeners.size);
    this.warmingGauge.set(this.warming.size);
    return stopped.map((l) => l.name);
  }

  private isStopped(config: ListenerConfig): boolean {
    return this.stopped === 'all' || (this.stopped === 'inbound' && config.trafficDirection === 'INBOUND');
  }

  /** The listeners warming (their fd not yet theirs to serve on): /config_dump's warming_state. */
  warmingListeners(): ListenerVersion[] {
    return [...this.warming.values()].map((w) => w.listener);
  }

  /** The listeners the last update refused: /config_dump's error_state. */
  errorStates(): ListenerErrorState[] {
    return [...this.errors.values()];
  }

  /** The listeners a change or a removal replaced whose connections still drain, oldest first. */
  draining(): DynamicListener[] {
    return [...this.drainingListeners.values()];
  }

  private initializeOnce(): void {
    const initialize = this.initialize;
    this.initialize = null;
    initialize?.();
  }
}
