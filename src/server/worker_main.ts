// A worker process (Envoy's worker thread): maps the supervisor's stats region, adopts the
// listen sockets the supervisor hands it and runs the data plane until told to stop, or orphaned.

import { setImmediate as nextTurn } from 'node:timers/promises';
import { attachRegion } from '../shared_memory/posix_shared_memory';
import { StatsMemoryError } from '../shared_memory/segments';
import { loggerFactory, openLogs } from '../log/log_settings';
import type { LogManager } from '../log/log_manager';
import type { ClusterConfig, OverloadManagerConfig } from '../config/model';
import type { Logger } from '../log/logger_api';
import { OverloadManager, type OverloadReport } from '../overload/overload_manager';
import { OverloadState } from '../overload/overload_state';
import { HeapShrinker } from '../overload/heap_shrinker';
import type { ResourceMonitorFactory } from '../overload/resource_monitor';
import { ListenerManager } from '../listener/listener_manager';
import { ListenSocket } from '../listener/listen_socket';
import { NetworkFilterBuilder } from '../listener/network_filter_builder';
import { dataPlaneFactories } from '../extensions/data_plane_extensions';
import { DrainManager } from '../hot_restart/drain_manager';
import { SystemClock } from '../common/clock';
import { mathRandom } from '../common/random';
import { AccessLogManager } from '../access_log/access_log_manager';
import { SharedStatsStore } from '../stats/store';
import { nodeLocality } from '../config/node_overrides';
import { ClusterManager } from '../upstream/worker/cluster_manager';
import { RouteConfigUpdates } from '../filters/network/http_connection_manager/route_config_updates';
import { declareClusterStatNames } from '../upstream/worker/cluster_stats';
import { LiveRuntime } from '../runtime/live_runtime';
import { ConnectionIds } from '../log/connection_log';
import { applyLevelChange } from '../log/level_change';
import { CertificateWatcher } from '../tls/certificate_watcher';
import { SecretStore } from '../tls/secret_store';
import type { TlsContext } from '../tls/tls_context';
import { countCaughtFailure } from './caught_failures';
import { DynamicWorkerListeners } from './dynamic_worker_listeners';
import { ListenSocketReceiver } from './listen_socket_handoff';
import { ContentionReporter } from './contention_reporter';
import { ProcessProfiler, type ProfileKind, profilePath } from './process_profiler';
import {
  decodeWorkerBootstrap,
  decodeWorkerClusterState,
  isMessage,
  SupervisorMessage,
  WorkerInit,
  WorkerMessage,
  WorkerStart,
  WORKER_PROTOCOL_VERSION,
} from './worker_protocol';
import { failureCounters, statsRecentLookupsGauge } from './server_stats';
import { WriteBatch } from '../network/write_batch';

function send(m: WorkerMessage): void {
  if (process.connected) process.send!(m);
}

/** After a failed accept() (out of descriptors), when to try again. */
const ACCEPT_RETRY_MS = 100;
/**
 * Clusters whose stat names a worker interns in one turn once it serves: about 2 ms of a
 * request's wait at a cluster's ~100 names.
 */
const DECLARED_CLUSTERS_PER_TURN = 16;
/** How long a fatal message may take to leave before the worker exits without knowing. */
const FATAL_SEND_WAIT_MS = 1000;

/** What the supervisor changes in a worker while it runs, applied as its messages arrive. */
interface WorkerControl {
  readonly runtime: LiveRuntime;
  healthCheckFailed: boolean;
  /** The log, once open: POST /logging changes wait for it, in the order sent. */
  readonly logsOpened: Promise<LogManager>;
}

/**
 * POST /logging, /cpuprofiler, /heapprofiler and GET /memory, whenever they come (start-up
 * included); false for a message that is not one of theirs.
 */
function adminRequestHandler(init: WorkerInit, logsOpened: Promise<LogManager>): (m: SupervisorMessage) => boolean {
  const profilers: Record<ProfileKind, ProcessProfiler> = { cpu: new ProcessProfiler('cpu'), heap: new ProcessProfiler('heap') };
  const reply = (kind: ProfileKind, id: number, file: string | null, error: string | null) =>
    send({ v: WORKER_PROTOCOL_VERSION, type: 'profile_reply', kind, id, file, error });
  return (m) => {
    if (m.type === 'memory_request') {
      send({ v: WORKER_PROTOCOL_VERSION, type: 'memory', id: m.id, usage: process.memoryUsage() });
    } else if (m.type === 'set_log_level') {
      logsOpened.then((logs) => applyLevelChange(logs, m.change), () => undefined);
    } else if (m.type === 'file_loggers_request') {
      // After the level changes sent before it, which wait for the log the same way.
      logsOpened.then((logs) => send({ v: WORKER_PROTOCOL_VERSION, type: 'file_loggers', id: m.id, loggers: logs.fileLevels() }), () => undefined);
    } else if (m.type === 'profile_start') {
      profilers[m.kind].start(profilePath(m.profilePath, { worker: init.workerIndex }, m.kind)).then(
        () => reply(m.kind, m.id, null, null),
        (e: Error) => reply(m.kind, m.id, null, e.message),
      );
    } else if (m.type === 'profile_stop') {
      profilers[m.kind].stop().then(
        (file) => reply(m.kind, m.id, file, file === null ? 'not profiling (started after the profiler was enabled)' : null),
        (e: Error) => reply(m.kind, m.id, null, e.message),
      );
    } else {
      return false;
    }
    return true;
  };
}

/**
 * Starts the data plane; resolves to the handler of the supervisor's later messages. What needs
 * only the bootstrap (the region) is done before `started` resolves, while the supervisor
 * initializes the clusters; the clusters' stat names are interned once the worker serves.
 */
async function run(
  init: WorkerInit,
  started: Promise<WorkerStart>,
  control: WorkerControl,
  receiver: ListenSocketReceiver,
): Promise<(m: SupervisorMessage) => void> {
  const logs = await control.logsOpened;
  const log = logs.component('main').forFile(__filename);
  const region = attachRegion(init.regionName);
  // A worker's waits on the region's locks count in the supervisor's GET /contention.
  if (init.mutexTracing) region.segments.onContention = new ContentionReporter((stats) => send({ v: WORKER_PROTOCOL_VERSION, type: 'contention', stats })).record;
  const store = new SharedStatsStore(region, init.column);
  // Set before the first lookup: a worker restarted while tracking is on tracks its start too.
  store.recentLookups.setCapacity(init.recentLookupsCapacity);
  store.publishLookupTotal(statsRecentLookupsGauge(store));
  // A bug of ours that escapes to the event loop: counted (the counters outlive this process)
  // before the worker exits, as before, to be restarted. Only the first: what the broken worker
  // throws until it is gone is no new bug.
  const failures = failureCounters(store);
  let failed = false;
  process.on('uncaughtException', (error) => {
    if (failed) return;
    failed = true;
    countCaughtFailure(failures, error);
    fatal(`uncaught exception: ${error.stack ?? error.message}`);
  });
  const bootstrap = decodeWorkerBootstrap(init.bootstrap);
  const start = await started;
  const { clusters: snapshots, dynamicClusters } = decodeWorkerClusterState(start.clusters);
  const logFactory = loggerFactory(logs);
  const ids = ConnectionIds.forWorker(init.workerIndex, init.workerCount);
  const clock = new SystemClock();
  // Shared by the worker's HTTP/1 connections, downstream and upstream: one flush at the end of a busy turn.
  const writeBatch = new WriteBatch(clock);
  // The TLS contexts look their secrets up here before each connection.
  const secrets = new SecretStore(bootstrap.secrets);
  for (const secret of start.secrets) secrets.set(secret);
  const clusters = new ClusterManager({
    configs: bootstrap.clusters,
    dynamicConfigs: dynamicClusters,
    snapshots,
    store,
    runtime: control.runtime,
    localClusterName: bootstrap.localClusterName,
    localLocality: nodeLocality(bootstrap.node),
    log: logFactory,
    connectionIds: ids,
    reportsTables: init.workerIndex === 0,
    buildOnFirstUse: true,
    secrets,
    onConsecutiveFailure: (cluster, host, failure) => send({ v: WORKER_PROTOCOL_VERSION, type: 'outlier_consecutive_failure', cluster, host, failure }),
    onHostsPicked: (cluster, addresses) => send({ v: WORKER_PROTOCOL_VERSION, type: 'hosts_picked', cluster, addresses }),
    clock,
    writeBatch,
  });
  // While health checks fail, every HTTP response closes its connection (Envoy's drain manager).
  const drain = new DrainManager({ ...init.drain, clock, healthCheckFailed: () => control.healthCheckFailed });
  // This worker's access log files: its own buffers, on descriptors opened O_APPEND, so that
  // every worker appends whole entries to a file they share.
  const accessLogFiles = new AccessLogManager({
    flushIntervalMs: init.fileFlushIntervalMs,
    onError: (path, error) => log.error(`access log ${path}: ${error.message}`),
  });
  const factories = dataPlaneFactories();
  const overload = new OverloadState();
  const routeConfigs = new RouteConfigUpdates(start.routeConfigs);
  const filters = new NetworkFilterBuilder({
    accessLogs: { files: accessLogFiles, loggers: factories.accessLoggers, runtime: control.runtime, random: mathRandom },
    bootstrap,
    stats: store,
    clusters,
    log: logFactory,
    ids,
    drain,
    overload,
    runtime: control.runtime,
    healthCheckFailed: () => control.healthCheckFailed,
    clock,
    writeBatch,
    httpFilters: factories.httpFilters,
    networkFilters: factories.networkFilters,
    tracers: factories.tracers,
    routeConfigs,
    secrets,
  });
  const listeners = new ListenerManager({
    stats: store,
    handler: `worker_${init.workerIndex}`,
    log: logFactory,
    ids,
    clock,
    runtime: control.runtime,
    // The supervisor's pid tells this epoch's workers from the last one's, which may still drain.
    balanceGroup: { id: String(process.ppid), worker: init.workerIndex, workers: init.workerCount },
  });
  const overloadManager = startOverloadManager(bootstrap.overloadManager, {
    factories: factories.resourceMonitors,
    state: overload,
    listeners,
    stats: store,
    log,
    onReport: (report) => send({ v: WORKER_PROTOCOL_VERSION, type: 'overload', workerIndex: init.workerIndex, ...report }),
  });
  const tlsContexts: TlsContext[] = [];
  for (const name of start.listeners) {
    const index = bootstrap.listeners.findIndex((l) => l.name === name);
    const server = new ListenSocket(receiver.receive(name), ACCEPT_RETRY_MS);
    const bound = server.address();
    const filter = filters.listenerFilter(index, { address: bound.address, port: bound.port });
    tlsContexts.push(...filter.tlsContexts);
    listeners.addListener(bootstrap.listeners[index], server, filter);
  }
  // Each worker reloads its own listeners' and clusters' certificates when their files change.
  const certificates = new CertificateWatcher([...tlsContexts, ...clusters.tlsContexts()], { clock, log: logs.component('config') });

  const dynamicListeners = new DynamicWorkerListeners({
    listeners,
    filters,
    receiver,
    processDrain: drain,
    drainOptions: { ...init.drain, clock },
    certificates,
    stats: store,
    retryMs: ACCEPT_RETRY_MS,
    log,
  });
  const stoppedCounter = store.counter('listener_manager.listener_stopped');
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`worker ${init.workerIndex} stopping: ${why}`);
    listeners.stopListeners();
    dynamicListeners.close();
    overloadManager?.close();
    certificates.close();
    filters.close();
    void listeners
      .close()
      .then(() => {
        clusters.close();
        drain.close();
        writeBatch.close();
        // The connections are closed and logged: their entries are written before the exit.
        return accessLogFiles.close();
      })
      .then(() => logs.flush())
      .finally(() => process.exit(0));
  };
  const reopenLogs = () => {
    void logs.reopen().catch((e: Error) => log.error(`cannot reopen the log file: ${e.message}`));
    // Failures are reported per file by the manager's onError.
    void accessLogFiles.reopen();
  };
  const handle = (m: SupervisorMessage) => {
    if (m.type === 'shutdown') stop('supervisor shutdown');
    if (m.type === 'reopen_logs') reopenLogs();
    if (m.type === 'cluster_update' || m.type === 'cluster_add') {
      try {
        if (m.type === 'cluster_update') clusters.update(m.update);
        else {
          clusters.add(m.config, m.snapshot);
          if (m.declaredBy === init.workerIndex) declareClusterStatNames(store, m.config);
        }
      } catch (e) {
        // Out of step with the supervisor: a restart brings this worker its current snapshots.
        fatal((e as Error).message);
      }
    }
    if (m.type === 'cluster_remove') clusters.remove(m.name);
    if (m.type === 'route_config') routeConfigs.update(m.update);
    if (m.type === 'listener_add') dynamicListeners.add(m.config);
    if (m.type === 'listener_update') dynamicListeners.update(m.config, m.keptChains);
    if (m.type === 'listener_remove') dynamicListeners.remove(m.name);
    if (m.type === 'secret') {
      secrets.set(m.secret);
      // The contexts naming it may read other files now.
      certificates.add([...tlsContexts, ...clusters.tlsContexts()]);
    }
    if (m.type === 'recent_lookups_capacity') store.recentLookups.setCapacity(m.capacity);
    if (m.type === 'recent_lookups_clear') store.clearRecentLookups();
    if (m.type === 'recent_lookups_request') send({ v: WORKER_PROTOCOL_VERSION, type: 'recent_lookups', id: m.id, lookups: store.recentLookups.snapshot() });
    if (m.type === 'stop_listeners') {
      const names = new Set(m.listeners);
      // Envoy counts a stop per listener per worker.
      const stopNow = () => stoppedCounter.add(listeners.stopListeners(names));
      if (m.graceful && !drain.draining) {
        log.info(`worker ${init.workerIndex} draining before it stops ${m.listeners.length} listener(s)`);
        drain.startDrainSequence(stopNow);
      } else stopNow();
    }
    if (m.type === 'drain' && !drain.draining) {
      log.info(`worker ${init.workerIndex} draining (${init.drain.strategy}, ${init.drain.drainTimeS}s)`);
      listeners.stopListeners();
      // Busy HTTP connections close after a response (drainClose); idle ones at the deadline.
      drain.startDrainSequence(() => listeners.closeIdleConnections());
    }
  };
  // The supervisor is gone (even SIGKILL closes the channel): no orphan keeps serving.
  process.on('disconnect', () => stop('supervisor disconnected'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Sent to every process of the unit by logrotate or `systemctl kill -s USR1`, as to Envoy's.
  process.on('SIGUSR1', reopenLogs);
  // Ctrl-C reaches the whole process group; the supervisor decides how workers stop.
  process.on('SIGINT', () => undefined);
  send({ v: WORKER_PROTOCOL_VERSION, type: 'ready' });
  log.info(`worker ${init.workerIndex} serving ${start.listeners.filter((name) => name !== null).length} listener(s)`);
  // Envoy declares a cluster's stats when it builds the cluster; here the workers share that out,
  // each its own slice, after they serve: 10,000 clusters' million names take a second a core,
  // off the way to LIVE. A cluster's traffic makes its stats on first use meanwhile.
  const share = [...bootstrap.clusters, ...dynamicClusters].filter((_, i) => i % init.workerCount === init.workerIndex);
  const declared = () => send({ v: WORKER_PROTOCOL_VERSION, type: 'stat_names_declared' });
  void declareInTurns(share, (config) => declareClusterStatNames(store, config), () => stopping).then(
    (done) => {
      if (done) declared();
    },
    (error: Error) => {
      // A full region costs the listing of the rest at 0, not the worker: each is made on first
      // use, in this process if it does not fit (stats.overflow), as any stat made while serving.
      if (!(error instanceof StatsMemoryError)) throw error;
      log.warn(`worker ${init.workerIndex}: the clusters' stat names no longer fit in shared memory; the rest are named on first use: ${error.message}`);
      declared();
    },
  );
  return handle;
}

/** Declares each of `configs`' stat names, a batch per turn; false if stopped first. */
async function declareInTurns(configs: readonly ClusterConfig[], declare: (config: ClusterConfig) => void, stopped: () => boolean): Promise<boolean> {
  for (let i = 0; i < configs.length; i += DECLARED_CLUSTERS_PER_TURN) {
    if (stopped()) return false;
    configs.slice(i, i + DECLARED_CLUSTERS_PER_TURN).forEach(declare);
    await nextTurn();
  }
  return true;
}

/** The worker's overload manager, reading its monitors from now on; null without overload_manager. */
function startOverloadManager(
  config: OverloadManagerConfig | null,
  deps: {
    factories: ReadonlyMap<string, ResourceMonitorFactory>;
    state: OverloadState;
    listeners: ListenerManager;
    stats: SharedStatsStore;
    log: Logger;
    onReport: (report: OverloadReport) => void;
  },
): OverloadManager | null {
  if (config === null) return null;
  // Validation admitted registered monitors only.
  const monitors = config.resourceMonitors.map((monitor) => deps.factories.get(monitor.name)!(monitor));
  const shrinkHeap = config.actions.find((action) => action.kind === 'shrink_heap');
  const heap = shrinkHeap === undefined ? null : new HeapShrinker(deps.stats.counter(`overload.${shrinkHeap.name}.shrink_count`));
  const targets = { state: deps.state, listeners: deps.listeners, heap };
  const manager = new OverloadManager({ config, monitors, targets, stats: deps.stats, log: deps.log, onReport: deps.onReport });
  manager.start();
  return manager;
}

/**
 * Tells the supervisor why, then exits 1 once the message has left, the channel is gone or
 * FATAL_SEND_WAIT_MS have passed (a channel that takes nothing more must not keep it running).
 */
function fatal(message: string): void {
  const m: WorkerMessage = { v: WORKER_PROTOCOL_VERSION, type: 'fatal', message };
  if (!process.connected) process.exit(1);
  process.send!(m, () => process.exit(1));
  // Unreferenced: it must not be what keeps the worker alive, and an exit for want of work fails too.
  process.exitCode = 1;
  setTimeout(() => process.exit(1), FATAL_SEND_WAIT_MS).unref();
}

process.once('message', (m: unknown) => {
  if (!isMessage<SupervisorMessage>(m) || m.type !== 'init') {
    fatal(`expected an init message of worker protocol v${WORKER_PROTOCOL_VERSION}`);
    return;
  }
  // Listening from the init on, so that nothing sent while the worker starts is lost: state
  // updates and admin requests apply at once, the rest waits for the data plane (no I/O runs
  // in between).
  // A settings error becomes a rejection, which run() reports as fatal.
  const logsOpened = Promise.resolve().then(() => openLogs(m.log, process.pid));
  const control: WorkerControl = { runtime: new LiveRuntime(m.runtime), healthCheckFailed: m.healthCheckFailed, logsOpened };
  const adminRequest = adminRequestHandler(m, logsOpened);
  const pending: SupervisorMessage[] = [];
  let handle: ((m: SupervisorMessage) => void) | null = null;
  let onStart: ((start: WorkerStart) => void) | null = null;
  const started = new Promise<WorkerStart>((resolve) => (onStart = resolve));
  process.on('message', (update: unknown) => {
    if (!isMessage<SupervisorMessage>(update)) return;
    if (update.type === 'start') onStart?.(update);
    else if (update.type === 'runtime') control.runtime.replace(update.values);
    else if (update.type === 'health_check') control.healthCheckFailed = update.failed;
    else if (adminRequest(update)) return;
    else if (handle === null) pending.push(update);
    else handle(update);
  });
  // Bound before the supervisor is told, which then sends the start's listen sockets over it.
  let receiver: ListenSocketReceiver;
  try {
    receiver = new ListenSocketReceiver();
  } catch (e) {
    fatal(`cannot bind the listen socket handoff: ${(e as Error).message}`);
    return;
  }
  send({ v: WORKER_PROTOCOL_VERSION, type: 'receiving' });
  run(m, started, control, receiver)
    .then((serving) => {
      handle = serving;
      for (const update of pending.splice(0)) serving(update);
    })
    .catch((e: Error) => fatal(e.stack ?? e.message));
});
