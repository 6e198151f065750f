// The supervisor of one epoch (Envoy's main thread): owns the stats region, binds the listen
// sockets, serves admin, forks the workers that carry traffic, and shuts it all down cleanly.

import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import type { AdminConfig, Bootstrap } from '../config/model';
import { isJsonObject } from '../config/json';
import { clustersHandler } from '../admin/clusters_handler';
import { outlierDetectorOf } from '../upstream/supervisor/outlier/detector';
import { certsHandler, daysUntilFirstCertExpires } from '../admin/certs_handler';
import { CertificateWatcher } from '../tls/certificate_watcher';
import { configuredTlsContexts } from '../tls/configured_contexts';
import { atField } from '../config/errors';
import { secretKey, type SecretSource, SecretStore } from '../tls/secret_store';
import { SecretManager } from '../secret/secret_manager';
import { tlsContextConfigs } from '../config/tls_context_configs';
import { addressString } from '../network/socket_address';
import { sanitizeStatName } from '../stats/stats';
import type { TlsContext } from '../tls/tls_context';
import { configDumpHandler, type DynamicClustersDump, type DynamicListenersDump } from '../admin/config_dump_handler';
import { DrainListenersRequest, drainListenersHandler } from '../admin/drain_listeners_handler';
import { initDumpHandler } from '../admin/init_dump_handler';
import { memoryHandler } from '../admin/memory_handler';
import { reopenLogsHandler } from '../admin/reopen_logs_handler';
import { contentionHandler } from '../admin/contention_handler';
import { cpuProfilerHandler, heapProfilerHandler } from '../admin/profiler_handlers';
import { fineGrainLoggingHandler } from '../admin/fine_grain_logging_handler';
import { loggingHandler } from '../admin/logging_handler';
import { MutexTracer } from '../shared_memory/mutex_tracer';
import type { AccessLogManager } from '../access_log/access_log_manager';
import { healthCheckHandlers } from '../admin/health_check_handler';
import { homeHandlers } from '../admin/home';
import { BoundListener, listenersHandler } from '../admin/listeners_handler';
import { serverHandlers } from '../admin/server_handlers';
import { statsHandlers } from '../admin/stats_handler';
import { resetCountersHandler } from '../admin/reset_counters_handler';
import { recentLookupsHandlers } from '../admin/recent_lookups_handler';
import { runtimeHandlers } from '../admin/runtime_handler';
import { LiveRuntime } from '../runtime/live_runtime';
import { RuntimeLoader } from '../runtime/runtime_loader';
import { RtdsLayers } from '../runtime/rtds_layers';
import { runtimeStats } from '../runtime/runtime_stats';
import { AdminHandler, AdminServer } from '../admin/admin_server';
import { adminProtection } from '../admin/admin_protection';
import { exposureWarning } from '../admin/exposure_warning';
import { DomainSocketHotRestart, HotRestart, NopHotRestart } from '../hot_restart/hot_restart';
import { tcpListenAddress } from '../hot_restart/messages';
import type { ParentHandlers } from '../hot_restart/parent_endpoint';
import { reclaimDeadPrivateRegions, shmEntries } from '../shared_memory/private_regions';
import { createRegion, posixSharedMemory, RegionHandle } from '../shared_memory/posix_shared_memory';
import { processAlive } from '../shared_memory/process_alive';
import type { Logger, LoggerFactory } from '../log/logger_api';
import * as addon from '../native/addon';
import type { StatsSnapshot } from '../stats/sample';
import { HistogramMerger } from '../stats/histogram_merger';
import { StatsFlusher } from '../stats/stats_flusher';
import { StatsSinks } from '../stats/sinks/stats_sinks';
import { TagProducer } from '../stats/tag_producer';
import type { Clock, TimeoutHandle } from '../common/clock';
import { CREATED_FILE_MODE } from '../common/file_mode';
import { reclaimColumns, zeroColumnGauges } from '../stats/column_reclaim';
import { StatKind } from '../shared_memory/region_layout';
import { SharedStatsStore } from '../stats/store';
import { OverloadGauges } from '../overload/overload_gauges';
import { healthSources } from '../upstream/supervisor/health_sources';
import { SupervisorClusterManager } from '../upstream/supervisor/supervisor_cluster_manager';
import { CdsApi } from '../upstream/supervisor/cds_api';
import { RouteConfigProviderManager } from '../rds/route_config_provider_manager';
import { routeConfigLoader } from '../rds/route_config_loader';
import { LdsApi, type ListenerVersion } from '../listener/lds_api';
import { bindListenSockets, type ListenSocketBinder, type ListenSockets, socketForNextEpoch, workerListenSocket } from '../listener/listen_sockets';
import { rdsSourcesOf } from '../config/rds_sources';
import type { ConfigSourceConfig } from '../config/config_source';
import { buildDataPlane } from './data_plane_construction';
import { bootstrapValidationContext } from '../config/validation/bootstrap';
import { ResourceDecoder } from '../config/xds/resource_decoder';
import { SubscriptionFactory, unknownDynamicFieldsPolicy } from '../config/xds/subscription_factory';
import { protoSchema } from '../config/schema';
import type { HostAddress } from '../config/xds/cluster_hosts';
import { CircuitBreakerStats } from '../upstream/supervisor/circuit_breaker_stats';
import { HistogramBucketSettings } from '../admin/stats/histogram_bucket_settings';
import { PrometheusFormatter } from '../admin/stats/prometheus';
import { TagExtractor } from '../admin/stats/tag_extractor';
import type { Options } from '../cli/options';
import { BuildInfo, versionGaugeValue } from './build_info';
import type { BuiltinExtensions } from '../extensions/builtin_extensions';
import { clusterTypes, healthCheckers, statsSinks } from '../extensions/supervisor_factories';
import { xdsNode } from './xds_node';
import { buildNodeFields } from './build_node_fields';
import { WORKER_RESTART_BACKOFF } from './backoff';
import { ServerStats, serverStats } from './server_stats';
import { countCaughtFailure } from './caught_failures';
import { SERVER_STATE_GAUGE, ServerInfoSource, ServerState } from './server_state';
import { monotonicUsec, NotifyFields, SystemdNotifier } from './systemd_notify';
import type { ReadinessFd } from './readiness_fd';
import { WorkerPool } from './worker_pool';
import { encodeWorkerBootstrap, encodeWorkerClusterState, workerBootstrap, workerClusterConfig, WORKER_PROTOCOL_VERSION } from './worker_protocol';
import type { LogSettings } from '../log/log_settings';
import type { LoggerLevel, LogManager } from '../log/log_manager';
import { ConnectionIds } from '../log/connection_log';
import { applyLevelChange, currentLogSettings, LevelChange } from '../log/level_change';
import { ServerProfiler } from './server_profiler';
import { ServerRecentLookups } from './server_recent_lookups';
import { mathRandom } from '../common/random';

const LISTEN_BACKLOG = 1024;
/** After a handover failed, the old epoch's workers may hold a port for a moment longer. */
const REBIND_TIMEOUT_MS = 5000;
/** The safety net behind the file system watch of the runtime's disk layer symlinks. */
const RUNTIME_POLL_MS = 10_000;
/** A worker writes a long profile before it answers; one that dies answers by exiting. */
const PROFILER_REPLY_TIMEOUT_MS = 10_000;
/** How long GET /memory, /stats/recentlookups and fine-grain POST /logging wait for a worker's answer. */
const ADMIN_REPLY_TIMEOUT_MS = 2000;
/** How often the preparation of /stats output looks again while a response is being streamed. */
const STATS_PREPARATION_BACKOFF_MS = 20;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface SupervisorDeps {
  readonly options: Options;
  readonly bootstrap: Bootstrap;
  readonly build: BuildInfo;
  readonly log: LoggerFactory;
  readonly logSettings: LogSettings;
  /** This process's loggers, whose levels POST /logging changes. */
  readonly logs: LogManager;
  /** Ends the process once shutdown has finished (flushing logs first). */
  readonly exit: (code: number) => void;
  /** Access log files (the admin's among them), flushed at --file-flush-interval-msec. */
  readonly accessLogs: AccessLogManager;
  /** --hot-restart-version's answer: the compatibility string, or `disabled`. */
  readonly hotRestartVersion: string;
  /** Distinct unknown bootstrap fields accepted (--allow-unknown-static-fields). */
  readonly staticUnknownFields: number;
  /** systemd's Type=notify socket, if the service manager gave one. */
  readonly notifier: SystemdNotifier;
  /** The hot-restarter's readiness descriptor, if it gave one. */
  readonly readiness: ReadinessFd;
  /** Times the stats flush interval. */
  readonly clock: Clock;
  /** What SIGUSR1 does (POST /reopen_logs too): every log file of every process reopened. */
  readonly reopenAllLogs: () => void;
  /** The extensions this build has (src/extensions/builtin_extensions.ts). */
  readonly extensions: BuiltinExtensions;
  /** The worker processes forked before the configuration was decoded (forkWorker), loading their code since: this epoch's workers. */
  readonly forkedWorkers: readonly ChildProcess[];
}

export class Supervisor implements ServerInfoSource {
  readonly restartEpoch: number;
  private readonly startMs = Date.now();
  /** When this epoch began to start, for server.initialization_time_ms. */
  private readonly startedAt = performance.now();
  private readonly log: Logger;
  private hotRestart: HotRestart | null = null;
  private handle: RegionHandle | null = null;
  private store: SharedStatsStore | null = null;
  private clusters: SupervisorClusterManager | null = null;
  /** The xDS transports; the ADS stream lives here. */
  private subscriptions: SubscriptionFactory | null = null;
  /** dynamic_resources.cds_config's client; null without CDS. */
  private cds: CdsApi | null = null;
  /** dynamic_resources.lds_config's client; null without LDS. */
  private lds: LdsApi | null = null;
  /** The connection managers' RDS subscriptions; null until the clusters are initialized. */
  private routes: RouteConfigProviderManager | null = null;
  /** The circuit breakers' gauges and limits, over every worker's counts. */
  private circuitBreakers: CircuitBreakerStats | null = null;
  private stats: ServerStats | null = null;
  /** /stats/recentlookups over this epoch's processes. */
  private recentLookups: ServerRecentLookups | null = null;
  /** server.total_connections' slot, read at every update (server.parent_connections). */
  private totalConnectionsSlot = -1;
  private workerColumns: number[] = [];
  /**
   * The listen sockets this epoch serves, by listener name, in config order: what workers
   * inherit and the next epoch asks for. /drain_listeners closes and removes them.
   */
  private readonly listenSockets = new Map<string, ListenSockets>();
  private readonly bound: BoundListener[] = [];
  private admin: AdminServer | null = null;
  private workers: WorkerPool | null = null;
  private flusher: StatsFlusher | null = null;
  /** The bootstrap's stats_sinks; null without any. */
  private sinks: StatsSinks | null = null;
  private runtime: RuntimeLoader | null = null;
  /** The rtds_layers' subscriptions; null until the primary clusters are initialized. */
  private rtds: RtdsLayers | null = null;
  private readonly histograms = new HistogramMerger();
  private readonly prometheus: PrometheusFormatter;
  private readonly tags: TagExtractor;
  private readonly histogramBuckets: HistogramBucketSettings;
  private parentShutdownTimer: TimeoutHandle | null = null;
  /** Set once the parent was told to drain: from then on this epoch carries the traffic. */
  private tookOver = false;
  /** The region's current epoch before this one: restored if this one fails to start. */
  private previousEpoch = 0;
  private currentState: ServerState = 'PRE_INITIALIZING';
  /** Admin /healthcheck/fail is in effect. Each epoch starts healthy, as Envoy's does. */
  private healthCheckFailed = false;
  private shutdownPromise: Promise<void> | null = null;
  /** --enable-mutex-tracing: this process's waits, and the workers' as they report them. */
  private readonly tracer: MutexTracer | null;
  /** Every TLS context of the bootstrap, reloaded here as in the workers, for /certs. */
  private tlsContexts: TlsContext[] = [];
  /** The admin listener's, with admin.security's transport_socket; kept apart from tlsContexts, which follow the bootstrap's SDS registrations. */
  private adminTlsContext: TlsContext | null = null;
  /** The SDS clients of the TLS contexts' secrets. */
  private secretManager: SecretManager | null = null;
  private certificateWatcher: CertificateWatcher | null = null;

  constructor(private readonly deps: SupervisorDeps) {
    this.restartEpoch = deps.options.restartEpoch;
    this.log = deps.log('main').forFile(__filename);
    this.tracer = deps.options.enableMutexTracing ? new MutexTracer() : null;
    const { statsConfig } = deps.bootstrap;
    this.tags = new TagExtractor(statsConfig);
    this.histogramBuckets = new HistogramBucketSettings(statsConfig.histogramBucketSettings);
    this.prometheus = new PrometheusFormatter(this.tags, this.histogramBuckets);
  }

  /** Envoy's serverState(): an initialized server failing its health checks is DRAINING. */
  state(): ServerState {
    return this.currentState === 'LIVE' && this.healthCheckFailed ? 'DRAINING' : this.currentState;
  }

  uptimeCurrentEpoch(): number {
    return Math.floor((Date.now() - this.startMs) / 1000);
  }

  uptimeAllEpochs(): number {
    const original = this.handle?.region.originalStartMs ?? this.startMs;
    return Math.floor((Date.now() - original) / 1000);
  }

  /**
   * Starts this epoch and tells systemd: a hot restart is a reload until the new epoch serves,
   * so that `systemctl reload` returns once it does; a failed start never says READY=1.
   */
  async start(): Promise<void> {
    const { options } = this.deps;
    const epoch = this.restartEpoch;
    this.notify(
      epoch > 0 && !options.disableHotRestart
        ? { RELOADING: '1', MONOTONIC_USEC: monotonicUsec(), STATUS: `epoch ${epoch}: hot restart, initializing` }
        : { STATUS: `epoch ${epoch}: initializing` },
    );
    try {
      await this.startEpoch();
    } catch (error) {
      this.notify({ STATUS: `epoch ${epoch}: failed to start: ${(error as Error).message}` });
      throw error;
    }
    // A stop that came during the start has said STOPPING=1 already.
    if (this.shutdownPromise === null) {
      this.notify({ READY: '1', STATUS: `epoch ${epoch}: serving, concurrency ${options.concurrency}` });
      this.announceServing();
    }
  }

  /**
   * The start sequence of an epoch (Envoy's; docs/hot-restart.md): hot restart
   * sockets, stats region, the parent's admin and listen sockets, workers, then the parent's
   * drain and, after --parent-shutdown-time-s, its termination.
   */
  private async startEpoch(): Promise<void> {
    const { options, bootstrap } = this.deps;
    const epoch = options.restartEpoch;
    const hotRestart = (this.hotRestart = options.disableHotRestart
      ? new NopHotRestart(options.baseId)
      : DomainSocketHotRestart.open(options, this.log));
    // As Envoy: when the hot-restarter (or whatever launched us) dies, we get SIGTERM and stop.
    if (!options.disableHotRestart) addon.setParentDeathSignal(os.constants.signals.SIGTERM);
    this.log.info(`initializing epoch ${epoch} (base id=${hotRestart.baseId}, hot restart version=${this.deps.hotRestartVersion})`);
    this.reclaimDeadPrivateRegions();
    this.handle = createRegion({
      baseId: hotRestart.baseId,
      restartEpoch: epoch,
      disableHotRestart: options.disableHotRestart,
      startMs: this.startMs,
    });
    const region = this.handle.region;
    region.beginInitializing(process.pid);
    // Every column of this epoch names the supervisor: if it dies, the next epoch reclaims them.
    this.store = new SharedStatsStore(region, region.claimColumn(epoch, process.pid));
    // Stats get their Prometheus names as the sort meets them, as Envoy extracts tags when it
    // creates a stat: the sort has compared the names already, which naming would do again.
    this.store.reader.onSortedRuns((names, slots, cut, shape) => this.tags.nameRun(names, slots, cut, shape));
    // Before this epoch counts anything: what the region holds already is not sent again.
    this.sinks = this.createStatsSinks();
    this.sinks?.baseline(this.store.reader.scalars());
    this.workerColumns = Array.from({ length: options.concurrency }, () => region.claimColumn(epoch, process.pid));
    this.stats = serverStats(this.store);
    this.store.publishLookupTotal(this.stats.statsRecentLookups);
    this.recentLookups = new ServerRecentLookups({ store: this.store, workers: () => this.workers, replyTimeoutMs: ADMIN_REPLY_TIMEOUT_MS });
    this.totalConnectionsSlot = this.store.names.intern('server.total_connections', StatKind.Gauge, 0);
    // The generation is the parent's (still the current epoch's) plus one.
    this.stats.hotRestartGeneration.set(this.stats.hotRestartGeneration.value() + 1);
    this.previousEpoch = region.currentEpoch;
    region.currentEpoch = epoch;
    this.stats.staticUnknownFields.add(this.deps.staticUnknownFields);
    this.stats.concurrency.set(options.concurrency);
    this.stats.hotRestartEpoch.set(epoch);
    this.stats.version.set(versionGaugeValue(this.deps.build));
    // The secrets this process's TLS contexts name: the static ones, and SDS's as accepted.
    const secrets = new SecretStore(bootstrap.secrets);
    this.tlsContexts = configuredTlsContexts(bootstrap, secrets);
    this.certificateWatcher = new CertificateWatcher(this.tlsContexts, {
      clock: this.deps.clock,
      log: this.deps.log('config'),
      onReload: () => this.updateCertificateExpiry(),
    });
    this.updateCertificateExpiry();
    this.setState('INITIALIZING');
    const store = this.store;
    // Loaded before admin and workers, which both read it; every change goes to the workers.
    this.runtime = new RuntimeLoader({
      layers: bootstrap.runtimeLayers,
      serviceCluster: bootstrap.node.cluster,
      stats: runtimeStats(store),
      log: this.deps.log('runtime'),
      onChange: (values) => {
        liveRuntime.replace(values);
        this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'runtime', values });
      },
      pollIntervalMs: RUNTIME_POLL_MS,
    });
    this.runtime.start();
    // What the supervisor's own readers (health checking, outlier detection) see, kept current.
    const liveRuntime = new LiveRuntime(this.runtime.values());
    this.circuitBreakers = new CircuitBreakerStats(bootstrap.clusters, store, liveRuntime);
    const sinks = this.sinks;
    // Started before the workers: what the region already holds is out of the first interval.
    this.flusher = new StatsFlusher({
      clock: this.deps.clock,
      intervalMs: bootstrap.statsFlushIntervalMs,
      merger: this.histograms,
      histograms: () => store.reader.histogramWriters(),
      beforeFlush: () => this.updateServerStats(),
      afterFlush: sinks === null ? undefined : () => this.flushSinks(sinks),
    });
    this.flusher.start();

    hotRestart.serveChild(this.parentHandlers());
    await hotRestart.shutdownParentAdmin();
    for (const l of bootstrap.listeners) {
      const sockets = await bindListenSockets(this.listenSocketBinder(epoch > 0), l.address.address, l.address.port, l.reusePort, options.concurrency);
      this.listenSockets.set(l.name, sockets);
      this.bound.push({ name: l.name, address: { address: l.address.address, port: sockets.port } });
    }
    if (bootstrap.admin) await this.startAdmin(bootstrap.admin, secrets);

    // The cluster manager owns membership from here on; the workers start from its snapshots,
    // once every cluster is initialized (Envoy's init manager holds the listeners until then).
    const subscriptions = this.subscriptionFactory();
    const secretManager = this.secretManagerOf(subscriptions, secrets);
    let activated = 0;
    const clusters = (this.clusters = new SupervisorClusterManager(bootstrap.clusters, {
      types: clusterTypes(this.deps.extensions),
      hosts: store.hosts,
      stats: store,
      log: this.deps.log,
      clock: this.deps.clock,
      runtime: liveRuntime,
      subscriptions,
      certificates: this.certificateWatcher!,
      secrets,
      secretsInitialized: (config) => secretManager.initializedFor(config),
      healthSources: healthSources(healthCheckers(this.deps.extensions)),
      onUpdate: (update) => this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'cluster_update', update }),
      onClusterActive: (config, snapshot) => {
        this.circuitBreakers?.add(config);
        // Before the workers run, the start of each declares its share of the stat names.
        const declaredBy = activated++ % options.concurrency;
        this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'cluster_add', config: workerClusterConfig(config), snapshot, declaredBy });
      },
      onClusterRemoved: (name) => {
        this.circuitBreakers?.remove(name);
        this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'cluster_remove', name });
      },
    }));
    // Made once per epoch, when the first worker is forked: every worker gets the same bytes.
    let bootstrapBytes: Uint8Array | null = null;
    const overload = bootstrap.overloadManager === null ? null : new OverloadGauges(bootstrap.overloadManager, store);
    this.workers = new WorkerPool({
      count: options.concurrency,
      columns: this.workerColumns,
      listeners: (workerIndex) => [...this.listenSockets].map(([name, sockets]) => ({ name, fd: workerListenSocket(sockets, workerIndex) })),
      dynamicListeners: () => this.lds?.serving() ?? [],
      clusterState: () =>
        encodeWorkerClusterState({ clusters: clusters.workerSnapshots(), dynamicClusters: clusters.dynamicConfigs().map(workerClusterConfig) }),
      start: (listeners, clusterState) => ({
        v: WORKER_PROTOCOL_VERSION,
        type: 'start',
        clusters: clusterState,
        listeners,
        routeConfigs: this.routes?.routeConfigs() ?? [],
        secrets: secrets.dynamicSecrets(),
      }),
      init: (workerIndex, column) => ({
        v: WORKER_PROTOCOL_VERSION,
        type: 'init',
        workerIndex,
        workerCount: options.concurrency,
        column,
        regionName: this.handle!.name,
        bootstrap: (bootstrapBytes ??= encodeWorkerBootstrap(workerBootstrap(bootstrap))),
        // A worker (re)started after POST /logging logs at the levels it set.
        log: currentLogSettings(this.deps.logSettings, this.deps.logs),
        drain: { strategy: options.drainStrategy, drainTimeS: options.drainTimeS },
        runtime: this.runtime!.values(),
        healthCheckFailed: this.healthCheckFailed,
        mutexTracing: this.tracer !== null,
        recentLookupsCapacity: this.recentLookups!.capacity,
        fileFlushIntervalMs: options.fileFlushIntervalMsec,
      }),
      onMessage: (m) => {
        if (m.type === 'contention') this.tracer?.merge(m.stats);
        else if (m.type === 'outlier_consecutive_failure') outlierDetectorOf(clusters.healthSources(m.cluster))?.onConsecutiveFailure(m.host, m.failure);
        else if (m.type === 'hosts_picked') clusters.hostsPicked(m.cluster, m.addresses);
        else if (m.type === 'overload') overload?.report(m.workerIndex, m);
      },
      onWorkerGone: (column, workerIndex) => {
        zeroColumnGauges(region, this.store!.names, this.store!.hosts, column);
        overload?.forget(workerIndex);
      },
      restarts: this.stats.workerRestarts,
      backoff: WORKER_RESTART_BACKOFF,
      log: this.log,
      stopTimeoutMs: 5000,
    });
    // Begun once the workers are forked (below): they load their code, decode the bootstrap and
    // intern their stat names meanwhile; their start waits for the clusters (Envoy's init
    // manager holds the listeners until then).
    const initialized = Promise.resolve().then(async () => {
      // As Envoy: the primary clusters, then the RTDS layers' first updates (or failures), then
      // the secondary clusters.
      await clusters.initialize(() => {
        this.rtds = new RtdsLayers(bootstrap.runtimeLayers, {
          subscriptions,
          schema: protoSchema(),
          runtime: this.runtime!,
          rootScope: store,
          log: this.deps.log('runtime'),
        });
        this.rtds.start();
        return this.rtds.initialized;
      });
      // Then the SDS secrets of the bootstrap's TLS contexts, which the management servers
      // among the static clusters deliver: their first update (or its failure, or
      // initial_fetch_timeout), as Envoy's init manager waits for the listeners' and clusters'.
      secretManager.start();
      await secretManager.initialized();
      // Then CDS, as Envoy's cluster manager initializes: its first update, and the clusters it
      // brought warmed, before listeners serve (or its failure or initial_fetch_timeout).
      const cdsConfig = bootstrap.dynamicResources.cdsConfig;
      if (cdsConfig !== null) {
        this.cds = new CdsApi({
          source: cdsConfig,
          subscriptions,
          clusters: {
            // A CDS cluster's TLS contexts find their secrets before it is built, and it warms until they come.
            addOrUpdateCluster: (config, source) => {
              secretManager.registerCluster(config);
              return clusters.addOrUpdateCluster(config, source);
            },
            removeCluster: (name) => clusters.removeCluster(name),
            dynamicClusterNames: () => clusters.dynamicClusterNames(),
          },
          schema: protoSchema(),
          disabledExtensions: this.deps.extensions.resolveDisabled(options.disabledExtensions).keys,
          extensions: this.deps.extensions,
          stats: store.scope('cluster_manager.cds'),
          log: this.deps.log('upstream'),
        });
        this.cds.start();
        await this.cds.initialized;
      }
      // Then the listeners' init targets, as Envoy's init manager runs them once the cluster
      // manager is initialized: each RDS subscription's first update, or its failure or timeout;
      // and LDS's first update with the listeners it brought warmed (or its failure or timeout).
      this.routes = new RouteConfigProviderManager(bootstrap, {
        subscriptions,
        stats: store,
        load: routeConfigLoader({
          schema: protoSchema(),
          context: bootstrapValidationContext(isJsonObject(bootstrap.source) ? bootstrap.source : {}, this.deps.extensions),
          disabledExtensions: this.deps.extensions.resolveDisabled(options.disabledExtensions).keys,
          activeClusters: () => clusters.activeClusterNames(),
          runtime: liveRuntime,
        }),
        onUpdate: (update) => this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'route_config', update }),
        log: this.deps.log('router'),
      });
      const staticRoutes = this.routes.start();
      const ldsConfig = bootstrap.dynamicResources.ldsConfig;
      if (ldsConfig !== null) {
        this.lds = this.ldsApi(ldsConfig, subscriptions);
        this.lds.start();
        await this.lds.initialized;
      }
      await staticRoutes;
    });
    const workersStarted = this.workers.start(initialized, this.deps.forkedWorkers);
    // Awaited below; a failure meanwhile must not count as unhandled.
    workersStarted.catch(() => undefined);
    await initialized;
    await workersStarted;
    hotRestart.drainParentListeners();
    this.tookOver = true;
    region.endInitializing(process.pid);
    if (epoch > 0) {
      this.parentShutdownTimer = this.deps.clock.setTimeout(() => {
        this.log.warn('shutting down parent after drain');
        hotRestart.terminateParent();
      }, options.parentShutdownTimeS * 1000);
    }
    this.setState('LIVE');
    this.stats.initializationTimeMs.recordValue(performance.now() - this.startedAt);
    this.stats.live.set(this.healthCheckFailed ? 0 : 1);
    this.log.info(`all ${options.concurrency} workers started; serving`);
    void this.prepareStatsOutput();
  }

  /**
   * Once serving, the work a first /stats would do in one step is done a batch per turn: the
   * name order of every stat, then the Prometheus grouping with each name's tags (Envoy
   * extracts them when it creates a stat). A /stats being answered meanwhile goes first: this
   * work only spares a later one its wait.
   */
  private async prepareStatsOutput(): Promise<void> {
    const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
    // The names the workers intern once they serve are ordered with the rest.
    await this.workers?.statNamesDeclared();
    const steps = this.statsOutputSteps();
    while (this.shutdownPromise === null) {
      if ((this.admin?.streaming ?? 0) > 0) {
        await sleep(STATS_PREPARATION_BACKOFF_MS);
        continue;
      }
      if (steps.next().done === true) return;
      await nextTurn();
    }
  }

  private *statsOutputSteps(): Generator<unknown> {
    yield* this.prometheus.prepare(yield* this.snapshot());
  }

  /** POST /logging: this process's loggers now, every worker's as soon as it reads the message. */
  private changeLogLevel(change: LevelChange): void {
    applyLevelChange(this.deps.logs, change);
    this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'set_log_level', change });
  }

  /** Fine-grain logging: the file loggers of this process and of every worker that answers, by path. */
  private async fileLevels(): Promise<LoggerLevel[]> {
    const all = new Map<string, LoggerLevel>();
    const workers = (await this.workers?.fileLoggers(ADMIN_REPLY_TIMEOUT_MS)) ?? [];
    for (const loggers of [this.deps.logs.fileLevels(), ...workers]) {
      for (const logger of loggers) if (!all.has(logger.name)) all.set(logger.name, logger);
    }
    return [...all.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** SIGUSR1: every worker reopens its --log-path (logrotate moved the file away). */
  reopenLogs(): void {
    this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'reopen_logs' });
  }

  /** POST /drain_listeners: the workers stop accepting, after the drain sequence if graceful. */
  private drainListeners(r: DrainListenersRequest): void {
    // As Envoy: ?inboundonly stops the listeners marked INBOUND, not the unspecified ones.
    const names = [
      ...this.deps.bootstrap.listeners.filter((l) => !r.inboundOnly || l.trafficDirection === 'INBOUND').map((l) => l.name),
      // LDS's: their sockets close in stopListeners, and LDS adds none of that direction from now on.
      ...(this.lds?.stopListeners(r.inboundOnly) ?? []),
    ];
    this.log.info(`admin /drain_listeners: stopping ${names.length} listener(s)${r.graceful ? ' after the drain sequence' : ''}`);
    this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'stop_listeners', listeners: names, graceful: r.graceful });
    // Our copy goes now: the socket closes, and connecting is refused, once the workers have let
    // go of theirs; a worker restarted later and the next epoch no longer get it.
    for (const name of names) {
      const sockets = this.listenSockets.get(name);
      if (sockets === undefined) continue;
      for (const fd of sockets.fds) addon.closeFd(fd);
      this.listenSockets.delete(name);
    }
  }

  /**
   * The service stops (a signal, /quitquitquit): systemd hears STOPPING=1 first. An epoch that
   * leaves because the next one took over calls shutdown() alone, as the service goes on.
   */
  stop(reason: string): Promise<void> {
    if (this.shutdownPromise === null) this.notify({ STOPPING: '1', STATUS: `epoch ${this.restartEpoch}: stopping (${reason})` });
    return this.shutdown(reason);
  }

  /** Clean shutdown: admin, then workers, then the region. Idempotent. */
  shutdown(reason: string): Promise<void> {
    this.shutdownPromise ??= this.doShutdown(reason);
    return this.shutdownPromise;
  }

  private async doShutdown(reason: string): Promise<void> {
    this.log.info(`shutting down: ${reason}`);
    this.flusher?.stop();
    this.sinks?.close();
    this.runtime?.close();
    this.certificateWatcher?.close();
    if (this.parentShutdownTimer !== null) this.deps.clock.clearTimeout(this.parentShutdownTimer);
    // A parent still draining goes with us (Envoy sends Terminate when the child shuts down);
    // an epoch that failed to start leaves its parent serving.
    if (this.tookOver) this.hotRestart?.terminateParent();
    this.stats?.live.set(0);
    await this.admin?.close();
    await this.workers?.stop();
    for (const sockets of this.listenSockets.values()) for (const fd of sockets.fds) addon.closeFd(fd);
    this.listenSockets.clear();
    this.hotRestart?.close();
    const handle = this.handle;
    if (handle && this.store) {
      handle.region.endInitializing(process.pid);
      // A start that failed leaves the parent serving: its stats are the current ones again.
      if (!this.tookOver && handle.region.currentEpoch === this.restartEpoch) handle.region.currentEpoch = this.previousEpoch;
      for (const col of [this.store.column, ...this.workerColumns]) {
        zeroColumnGauges(handle.region, this.store.names, this.store.hosts, col);
        handle.region.retireColumn(col);
      }
      this.cds?.close();
      this.lds?.close();
      this.rtds?.close();
      this.routes?.close();
      this.secretManager?.close();
      this.clusters?.close();
      this.subscriptions?.close();
      if (handle.privateRegion) handle.region.unlink();
    }
    this.log.info('exiting');
  }

  /** What this epoch does for the next one. */
  private parentHandlers(): ParentHandlers {
    return {
      shutdownAdmin: async () => {
        this.log.warn('shutting down admin due to child startup');
        await this.admin?.close();
        this.admin = null;
        this.log.warn('terminating parent process');
        this.hotRestart!.terminateParent();
        return { originalStartTimeUnixSeconds: Math.floor(this.handle!.region.originalStartMs / 1000) };
      },
      passListenSocket: (address, workerIndex) => {
        const listener = this.bound.find((b) => tcpListenAddress(b.address.address, b.address.port) === address);
        // LDS's listeners pass by address too: the next epoch asks once its own LDS brings them.
        const sockets =
          listener !== undefined
            ? this.listenSockets.get(listener.name)
            : this.lds?.serving().find((l) => tcpListenAddress(l.bound.address, l.bound.port) === address)?.sockets;
        return sockets === undefined ? null : socketForNextEpoch(sockets, workerIndex);
      },
      drainListeners: () => {
        this.log.warn('closing and draining listeners');
        this.setState('DRAINING');
        this.workers?.drain();
      },
      terminate: () => void this.shutdown('the next epoch asked this one to terminate').then(() => this.deps.exit(0)),
    };
  }

  /** A crash loop must not fill /dev/shm: what dead proxies left is removed, and said. */
  private reclaimDeadPrivateRegions(): void {
    const found = reclaimDeadPrivateRegions({ memory: posixSharedMemory, ownPid: process.pid, alive: processAlive, entries: shmEntries });
    for (const { pid, objects, error } of found) {
      if (error === null) this.log.warn(`reclaimed the stats shared memory of proxy process ${pid}, which is gone: ${objects.join(' ')}`);
      else this.log.warn(`cannot reclaim the stats shared memory of proxy process ${pid}, which is gone (${objects.join(' ')}): ${error.message}`);
    }
  }

  /**
   * dynamic_resources.lds_config's client: sockets bound here (or taken over from the previous
   * epoch by address), handed to every worker.
   */
  private ldsApi(source: ConfigSourceConfig, subscriptions: SubscriptionFactory): LdsApi {
    const { bootstrap, options, extensions, clock } = this.deps;
    return new LdsApi({
      source,
      subscriptions,
      bootstrap,
      extensions,
      disabledExtensions: extensions.resolveDisabled(options.disabledExtensions).keys,
      serviceCluster: options.serviceCluster,
      activeClusters: () => this.clusters!.activeClusterNames(),
      buildCheck: (checked) => buildDataPlane(checked, this.deps.log),
      // Created before LDS starts (see startEpoch): a listener's RDS subscriptions are made as it
      // warms; it takes traffic once its routes and its SDS secrets have come (or failed).
      warm: (checked) => Promise.all([this.routes!.warm(rdsSourcesOf(checked)), this.secretManager!.listenerInitialized(checked)]).then(() => undefined),
      registerSecrets: (checked) =>
        this.secretManager!.registerListener(checked, `listener.${sanitizeStatName(addressString(checked.listeners[0]!.address))}`),
      sockets: {
        // A listener removed a moment ago, or the previous epoch's, may hold the address in workers a moment longer.
        bind: ({ address, reusePort }) => bindListenSockets(this.listenSocketBinder(true), address.address, address.port, reusePort, options.concurrency),
        close: (sockets) => {
          for (const fd of sockets.fds) {
            this.workers?.forgetListenSocket(fd);
            addon.closeFd(fd);
          }
        },
        add: (config, sockets) => this.workers?.addListener({ config, sockets }),
        update: (config, keptChains) => this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'listener_update', config, keptChains }),
        remove: (name) => this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'listener_remove', name }),
      },
      stats: this.store!,
      drainTimeS: options.drainTimeS,
      clock,
      log: this.deps.log('config'),
    });
  }

  /** The LDS part of /config_dump: each listener's active, warming, (last) draining and error states; null without LDS. */
  private dynamicListenersDump(): DynamicListenersDump | null {
    const lds = this.lds;
    if (lds === null) return null;
    const byName = (listeners: readonly ListenerVersion[]) => new Map(listeners.map((l) => [l.name, l]));
    const [active, warming, draining] = [byName(lds.serving()), byName(lds.warmingListeners()), byName(lds.draining())];
    const errors = new Map(lds.errorStates().map((e) => [e.name, e]));
    const state = (l: ListenerVersion | undefined) => (l === undefined ? null : { versionInfo: l.versionInfo, source: l.source, lastUpdated: l.lastUpdated });
    const names = [...new Set([...active.keys(), ...warming.keys(), ...draining.keys(), ...errors.keys()])];
    return {
      versionInfo: lds.versionInfo(),
      listeners: names.map((name) => ({
        name,
        active: state(active.get(name)),
        warming: state(warming.get(name)),
        draining: state(draining.get(name)),
        error: errors.get(name) ?? null,
      })),
    };
  }

  /** The CDS part of /config_dump; null without CDS. */
  private dynamicClustersDump(): DynamicClustersDump | null {
    if (this.cds === null || this.clusters === null) return null;
    const { active, warming } = this.clusters.dynamicClusters();
    return { versionInfo: this.cds.versionInfo(), active, warming };
  }

  /**
   * The SDS clients of the bootstrap's TLS contexts, not started yet: each accepted secret
   * reaches this process's contexts (so /certs and the expiry gauge follow it) and every worker.
   */
  private secretManagerOf(subscriptions: SubscriptionFactory, secrets: SecretStore): SecretManager {
    const contexts = tlsContextConfigs(this.deps.bootstrap);
    const manager = (this.secretManager = new SecretManager({
      subscriptions,
      schema: protoSchema(),
      store: secrets,
      stats: this.store!,
      log: this.deps.log('config'),
      // The bootstrap's contexts naming it load with it, or the update is rejected.
      check: (secret) => {
        const candidate: SecretSource = {
          generation: secrets.generation,
          find: (config, kind) => (config.sdsConfig !== null && secretKey(config, kind) === secret.key ? secret.value : secrets.find(config, kind)),
        };
        // this.tlsContexts are made from these configurations, in this order.
        contexts.forEach(({ path }, i) => atField(path, () => this.tlsContexts[i]!.checkWith(candidate)));
      },
      onSecret: (secret) => {
        this.updateCertificateExpiry();
        // The contexts naming it may read other files now.
        this.certificateWatcher?.add(this.tlsContexts);
        this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'secret', secret });
      },
    }));
    for (const context of contexts) {
      const bound = this.bound.find((b) => b.name === context.listener);
      const owner = context.cluster !== null ? `cluster.${context.cluster.statName}` : `listener.${sanitizeStatName(addressString(bound!.address))}`;
      manager.register(context.common, owner, context.side, context.path);
    }
    return manager;
  }

  /** The xDS subscriptions of this epoch's clusters, under the command line's unknown-field policy. */
  private subscriptionFactory(): SubscriptionFactory {
    const { options } = this.deps;
    const log = this.deps.log('config');
    const policy = unknownDynamicFieldsPolicy(options.rejectUnknownDynamicFields, options.ignoreUnknownDynamicFields);
    const schema = protoSchema();
    const { bootstrap, build, clock } = this.deps;
    this.subscriptions = new SubscriptionFactory({
      schema,
      decoder: new ResourceDecoder(schema, policy, this.stats!.dynamicUnknownFields, log),
      log,
      clock,
      random: mathRandom,
      stats: this.store!,
      node: xdsNode(bootstrap, build, this.deps.extensions, options.disabledExtensions),
      adsConfig: bootstrap.dynamicResources.adsConfig,
      clusterAddresses: (name) => this.clusterAddresses(name),
    });
    return this.subscriptions;
  }

  /** The hosts a static cluster has now (validation has made sure the supervisor's clients name static ones). */
  private clusterAddresses(name: string): HostAddress[] {
    return this.clusters?.snapshot(name)?.hosts.map((host) => host.address) ?? [];
  }

  /** The bootstrap's stats sinks, created by their descriptors; null without any. */
  private createStatsSinks(): StatsSinks | null {
    const { bootstrap, build, options, extensions } = this.deps;
    if (bootstrap.statsSinks.length === 0) return null;
    const log = this.deps.log('stats');
    const sinks = statsSinks(extensions, bootstrap.statsSinks, {
      clusterAddresses: (name) => this.clusterAddresses(name),
      node: xdsNode(bootstrap, build, extensions, options.disabledExtensions),
      tags: new TagProducer(bootstrap.statsConfig),
      histogramBuckets: this.histogramBuckets,
      schema: protoSchema(),
      stats: this.store!,
      log,
    });
    return new StatsSinks(sinks, log);
  }

  /**
   * The sinks' part of a flush. Only the region's current epoch sends: during a hot restart the
   * parent and the child read the same counters, which would otherwise be sent twice.
   */
  private flushSinks(sinks: StatsSinks): void {
    if (this.handle!.region.currentEpoch === this.restartEpoch) sinks.flush(this.statsNow(), Date.now());
  }

  /**
   * Listen sockets from the previous epoch, else fresh ones.
   * @param mayBeHeld after a failed handover, a fresh bind waits for the old epoch to let go
   */
  private listenSocketBinder(mayBeHeld: boolean): ListenSocketBinder {
    return {
      inherit: (address, port, workerIndex) => this.hotRestart!.duplicateParentListenSocket(tcpListenAddress(address, port), workerIndex),
      bind: (address, port, reusePort) => this.bindListener(address, port, reusePort, mayBeHeld),
      close: (fd) => addon.closeFd(fd),
    };
  }

  /** Binds a fresh listen socket; after a failed handover, waits for the old epoch to let go. */
  private async bindListener(address: string, port: number, reusePort: boolean, mayBeHeld: boolean): Promise<addon.TcpListenSocket> {
    const deadline = Date.now() + (mayBeHeld ? REBIND_TIMEOUT_MS : 0);
    for (;;) {
      try {
        return addon.listenTcp(address, port, LISTEN_BACKLOG, reusePort);
      } catch (e) {
        if ((e as addon.NativeError).code !== 'EADDRINUSE' || !mayBeHeld) throw e;
        if (Date.now() >= deadline) {
          // The previous epoch's socket cannot be shared when one of the two has SO_REUSEPORT and the other not.
          throw new Error(`${(e as Error).message}, still after ${REBIND_TIMEOUT_MS / 1000} s: another process holds the address, or the previous epoch does with${reusePort ? 'out' : ''} reuse_port`);
        }
        await sleep(100);
      }
    }
  }

  /**
   * What GET /stats renders: counters and gauges as they are now, histograms as of the last
   * flush. Taken once the name order is up to date, a step per turn (see StatsReader.ordered).
   */
  private *snapshot(): Generator<void, StatsSnapshot> {
    yield* this.store!.reader.ordered();
    this.updateServerStats();
    return this.statsNow();
  }

  /** Counters and gauges as they are now, histograms as of the last flush. */
  private statsNow(): StatsSnapshot {
    const reader = this.store!.reader;
    return {
      scalars: reader.scalars(),
      histograms: reader.histograms().map((h) => ({
        name: h.name,
        id: h.slot,
        used: h.used,
        interval: this.histograms.interval(h.slot),
        cumulative: this.histograms.cumulative(h.slot),
      })),
    };
  }

  /** Days count down with the wall clock: refreshed with the other server stats, and after reloads. */
  private updateCertificateExpiry(): void {
    this.stats?.daysUntilFirstCertExpiring.set(daysUntilFirstCertExpires(this.allTlsContexts(), Date.now()));
  }

  /** The listeners' and clusters' contexts, then the admin listener's. */
  private allTlsContexts(): TlsContext[] {
    return this.adminTlsContext === null ? this.tlsContexts : [...this.tlsContexts, this.adminTlsContext];
  }

  private updateServerStats(): void {
    const s = this.stats!;
    const region = this.handle!.region;
    const epoch = this.restartEpoch;
    // Only the newest epoch keeps the columns; an older one is on its way out.
    if (region.currentEpoch === epoch) {
      reclaimColumns(this.store!, epoch);
      const slot = this.totalConnectionsSlot;
      const reader = this.store!.reader;
      s.parentConnections.set(reader.gaugeValue(slot, false) - reader.gaugeValue(slot, true));
    }
    this.circuitBreakers?.update();
    s.uptime.set(this.uptimeAllEpochs());
    this.updateCertificateExpiry();
    const mem = process.memoryUsage();
    s.memoryAllocated.set(mem.heapUsed);
    s.memoryHeapSize.set(mem.heapTotal);
    s.memoryPhysicalSize.set(mem.rss);
  }

  /** A failed notification costs systemd's view of the service, never the service itself. */
  private notify(fields: NotifyFields): void {
    // --mode init_only exits once initialized: it never serves, so it has nothing to announce.
    if (this.deps.options.mode !== 'serve') return;
    try {
      this.deps.notifier.notify(fields);
    } catch (error) {
      this.log.warn(`cannot notify systemd: ${(error as Error).message}`);
    }
  }

  /** Tells the hot-restarter this epoch serves: a restart it holds may go ahead. */
  private announceServing(): void {
    // --mode init_only never serves.
    if (this.deps.options.mode !== 'serve') return;
    try {
      this.deps.readiness.announceServing();
    } catch (error) {
      this.log.warn(`cannot tell the hot-restarter this epoch serves: ${(error as Error).message}`);
    }
  }

  private setState(state: ServerState): void {
    this.currentState = state;
    this.stats?.state.set(SERVER_STATE_GAUGE[this.state()]);
  }

  /** Admin /healthcheck/fail|ok: server.live and server.state follow, and every worker hears it at once. */
  private setHealthCheckFailed(failed: boolean): void {
    this.healthCheckFailed = failed;
    this.stats?.live.set(failed ? 0 : 1);
    this.setState(this.currentState);
    this.workers?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'health_check', failed });
  }

  /** @param secrets the static secrets, which the admin's TLS context may name */
  private async startAdmin(config: AdminConfig, secrets: SecretStore): Promise<void> {
    const { bootstrap, build, options } = this.deps;
    const { accessLogPath, profilePath, security } = config;
    const handlers: AdminHandler[] = [];
    const tracer = this.tracer;
    // The stats region's structural waits are the supervisor's one lock-like wait to trace.
    if (tracer) this.handle!.region.segments.onContention = tracer.record;
    handlers.push(
      ...homeHandlers(() => handlers),
      ...serverHandlers({
        build,
        info: this,
        options,
        node: bootstrap.node,
        localAddress: bootstrap.localAddress ?? '',
        extensions: this.deps.extensions,
        hotRestartVersion: this.deps.hotRestartVersion,
        quit: () => void this.stop('admin /quitquitquit').then(() => this.deps.exit(0)),
      }),
      ...statsHandlers(() => this.snapshot(), this.prometheus, () => this.workers?.statNamesDeclared() ?? Promise.resolve()),
      // As Envoy: a reset also clears the recent lookups.
      resetCountersHandler(() => {
        this.store!.reader.resetCounters();
        this.recentLookups!.clear();
      }),
      ...recentLookupsHandlers(this.recentLookups!),
      ...healthCheckHandlers((failed) => this.setHealthCheckFailed(failed)),
      clustersHandler(
        () => this.clusters?.snapshots() ?? [],
        (slot) => this.store!.hosts.read(slot),
        (cluster) => this.circuitBreakers?.thresholds(cluster) ?? null,
        (cluster) => outlierDetectorOf(this.clusters?.healthSources(cluster) ?? []),
        {
          versionInfo: () => (bootstrap.dynamicResources.cdsConfig === null ? 'static' : (this.cds?.versionInfo() ?? '')),
          addedViaApi: (cluster) => this.clusters?.addedViaApi(cluster) ?? false,
        },
      ),
      listenersHandler(() => [...this.bound, ...(this.lds?.serving().map((l) => ({ name: l.name, address: l.bound })) ?? [])]),
      configDumpHandler(
        bootstrap,
        buildNodeFields(build, this.deps.extensions, options.disabledExtensions),
        new Date(this.startMs),
        () => this.dynamicClustersDump(),
        () => this.routes?.dynamicRouteConfigs() ?? [],
        () => this.secretManager?.dump() ?? [],
        () => this.dynamicListenersDump(),
      ),
      contentionHandler(tracer),
      ...runtimeHandlers(this.runtime!),
      this.deps.logs.fineGrain
        ? fineGrainLoggingHandler({ fileLevels: () => this.fileLevels(), change: (change) => this.changeLogLevel(change) })
        : loggingHandler({ levels: () => this.deps.logs.componentLevels(), change: (change) => this.changeLogLevel(change) }),
      cpuProfilerHandler(new ServerProfiler({ kind: 'cpu', profilePath, workers: () => this.workers, replyTimeoutMs: PROFILER_REPLY_TIMEOUT_MS })),
      heapProfilerHandler(new ServerProfiler({ kind: 'heap', profilePath, workers: () => this.workers, replyTimeoutMs: PROFILER_REPLY_TIMEOUT_MS })),
      // The supervisor's own copies of the static listeners' and clusters' TLS contexts, and the admin listener's,
      // which its watcher reloads. A context still waiting for an SDS secret has no certificate yet (Envoy has no context then).
      certsHandler(() => this.allTlsContexts().filter((context) => context.loaded)),
      memoryHandler(async () => [process.memoryUsage(), ...((await this.workers?.memoryUsage(ADMIN_REPLY_TIMEOUT_MS)) ?? [])]),
      drainListenersHandler((r) => this.drainListeners(r)),
      reopenLogsHandler(this.deps.reopenAllLogs),
      // Until the workers serve them, every listener waits for them.
      initDumpHandler(() =>
        this.currentState === 'LIVE' || this.currentState === 'DRAINING'
          ? []
          : bootstrap.listeners.map((l) => ({ name: `Listener-local-init-manager ${l.name}`, target_names: ['workers'] })),
      ),
    );
    const accessLog = await this.deps.accessLogs.open(accessLogPath);
    const failures = this.stats!.failures;
    const traffic = { ids: ConnectionIds.forSupervisor(options.concurrency), connHandler: this.deps.log('conn_handler'), http: this.deps.log('http') };
    const protection = security === null ? null : adminProtection(security, secrets, this.store!.scope('listener.admin'));
    this.adminTlsContext = protection?.tls?.context ?? null;
    if (this.adminTlsContext !== null) {
      this.certificateWatcher!.add([this.adminTlsContext]);
      this.updateCertificateExpiry();
    }
    this.admin = new AdminServer(handlers, this.store!, this.deps.log('admin'), accessLog, traffic, (error) => countCaughtFailure(failures, error), protection);
    const bound = await this.admin.listen(config.address.address, config.address.port);
    this.log.info(`admin address: ${bound.address}:${bound.port}`);
    const warning = exposureWarning(bound.address, bound.port, security);
    if (warning !== null) this.log.warn(warning);
    if (options.adminAddressPath) {
      // Written aside and renamed into place: whoever polls for the file never reads it empty.
      const target = options.adminAddressPath;
      const written = `${target}.${process.pid}.tmp`;
      try {
        fs.writeFileSync(written, `${bound.address}:${bound.port}`, { mode: CREATED_FILE_MODE });
        fs.renameSync(written, target);
      } catch (error) {
        // The operator named the file, not our temporary one.
        throw new Error((error as Error).message.replaceAll(written, target));
      }
    }
  }
}
