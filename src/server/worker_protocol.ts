// Messages between the supervisor and its workers over Node's child_process IPC channel.
// Versioned: a worker from another build refuses a message it does not understand.

import * as v8 from 'node:v8';
import type { Bootstrap, ClusterConfig, ListenerConfig, SocketAddress } from '../config/model';
import type { KeyedRouteConfig } from '../config/rds_sources';
import type { KeptChain } from '../listener/lds_update_plan';
import type { ClusterSnapshot, MembershipUpdate } from '../upstream/shared/membership';
import type { LogSettings } from '../log/log_settings';
import type { DrainStrategy } from '../hot_restart/drain_manager';
import type { RuntimeValues } from '../runtime/runtime';
import type { LevelChange } from '../log/level_change';
import type { LoggerLevel } from '../log/log_manager';
import type { MutexStats } from '../shared_memory/mutex_tracer';
import type { HostSlot } from '../stats/stats';
import type { ProcessLookups } from '../stats/recent_lookups';
import type { ProfileKind } from './process_profiler';
import type { ConsecutiveFailure } from '../upstream/shared/outlier/consecutive_failure';
import type { DynamicSecret } from '../tls/secret_store';
import type { OverloadReport } from '../overload/overload_manager';

export const WORKER_PROTOCOL_VERSION = 18;

/**
 * The clusters' state a worker starts from, besides the bootstrap. Large (about 600 bytes per
 * cluster), so the supervisor serializes it once for all the workers it starts together.
 */
export interface WorkerClusterState {
  /** Every cluster's current membership (the supervisor owns it), so a restarted worker is never stale. */
  readonly clusters: readonly ClusterSnapshot[];
  /** The active CDS clusters (workerClusterConfig form); their membership is in `clusters`. */
  readonly dynamicClusters: readonly ClusterConfig[];
}

/** V8's serialization, the channel's own: the worker's decoding gives back the same values. */
export function encodeWorkerBootstrap(bootstrap: Bootstrap): Uint8Array {
  return v8.serialize(bootstrap);
}

/** The bootstrap of workerBootstrap(), as encodeWorkerBootstrap made it. */
export function decodeWorkerBootstrap(bytes: Uint8Array): Bootstrap {
  return v8.deserialize(bytes) as Bootstrap;
}

/**
 * WorkerClusterState on the wire: the snapshots' JSON texts one after another in one string (the
 * i-th ends at `ends[i]`) beside their clusters' names, the cluster configs as they are. One
 * string of megabytes is made in V8's large object space: 10,000 strings of 600 bytes were
 * copied by each young-generation GC of the worker's start.
 */
interface EncodedClusterState {
  readonly names: readonly string[];
  readonly snapshots: string;
  readonly ends: readonly number[];
  readonly dynamicClusters: readonly ClusterConfig[];
}

/**
 * The snapshots are plain data (addresses, weights, localities, metadata): each travels as JSON
 * text, which the worker parses when it first reads that snapshot (EncodedSnapshot); a cluster
 * config keeps V8's serialization (it holds more than JSON does).
 */
export function encodeWorkerClusterState(state: WorkerClusterState): Uint8Array {
  const texts = state.clusters.map((snapshot) => JSON.stringify(snapshot));
  let end = 0;
  const encoded: EncodedClusterState = {
    names: state.clusters.map((snapshot) => snapshot.cluster),
    snapshots: texts.join(''),
    ends: texts.map((text) => (end += text.length)),
    dynamicClusters: state.dynamicClusters,
  };
  return v8.serialize(encoded);
}

export function decodeWorkerClusterState(bytes: Uint8Array): WorkerClusterState {
  const { names, snapshots, ends, dynamicClusters } = v8.deserialize(bytes) as EncodedClusterState;
  return { clusters: names.map((name, i) => new EncodedSnapshot(name, snapshots, i === 0 ? 0 : ends[i - 1]!, ends[i]!)), dynamicClusters };
}

/**
 * A snapshot as a worker received it, parsed at its first read: when the worker builds the
 * cluster, which for most of 10,000 clusters waits for their first request. Parsing them all
 * (30,000 hosts) held the worker's start for 190 ms.
 */
class EncodedSnapshot implements ClusterSnapshot {
  private texts: string | null;
  private decoded: ClusterSnapshot | null = null;

  /** Its JSON text is `texts` from `start` to `end`. */
  constructor(
    readonly cluster: string,
    texts: string,
    private readonly start: number,
    private readonly end: number,
  ) {
    this.texts = texts;
  }

  get version(): number {
    return this.snapshot().version;
  }

  get hosts(): ClusterSnapshot['hosts'] {
    return this.snapshot().hosts;
  }

  get policy(): ClusterSnapshot['policy'] {
    return this.snapshot().policy;
  }

  private snapshot(): ClusterSnapshot {
    if (this.decoded === null) {
      this.decoded = JSON.parse(this.texts!.slice(this.start, this.end)) as ClusterSnapshot;
      this.texts = null;
    }
    return this.decoded;
  }
}

/**
 * The first message, sent as soon as the worker is forked: it opens its log, maps the region,
 * decodes the bootstrap and interns its share of the static clusters' stat names while the
 * supervisor initializes the clusters; then it waits for its WorkerStart.
 */
export interface WorkerInit {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'init';
  readonly workerIndex: number;
  /** --concurrency: the workers share out the clusters whose stat names they declare. */
  readonly workerCount: number;
  readonly column: number;
  readonly regionName: string;
  /** workerBootstrap()'s, encoded once (encodeWorkerBootstrap) for every worker of the epoch. */
  readonly bootstrap: Uint8Array;
  readonly log: LogSettings;
  /** How this worker drains when its epoch is replaced (--drain-strategy, --drain-time-s). */
  readonly drain: { readonly strategy: DrainStrategy; readonly drainTimeS: number };
  /** The runtime's final values as of this (re)start; changes follow as messages. */
  readonly runtime: RuntimeValues;
  /** The admin /healthcheck/fail state when this worker was started (a restarted worker keeps it). */
  readonly healthCheckFailed: boolean;
  /** --enable-mutex-tracing: report waits on the stats region's locks (WorkerContention). */
  readonly mutexTracing: boolean;
  /** How many stat names looked up by string to remember now (0: /stats/recentlookups disabled). */
  readonly recentLookupsCapacity: number;
  /** --file-flush-interval-msec: how long access log entries wait in the worker before they are written. */
  readonly fileFlushIntervalMs: number;
}

/** Sent once the supervisor's clusters are initialized: the worker builds its data plane and serves. */
export interface WorkerStart {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'start';
  /** A WorkerClusterState as encodeWorkerClusterState made it: the same for every worker started together. */
  readonly clusters: Uint8Array;
  /**
   * The listeners the worker serves, in the order their sockets were sent over its handoff
   * socket (listen_socket_handoff.ts) just before this message.
   */
  readonly listeners: readonly string[];
  /** The route configurations RDS has brought so far; later ones follow as messages. */
  readonly routeConfigs: readonly KeyedRouteConfig[];
  /** Every SDS secret the supervisor has accepted so far; later ones follow as WorkerSecret. */
  readonly secrets: readonly DynamicSecret[];
}

/** An SDS secret came or was replaced: TLS contexts naming it use it for their next connections. */
export interface WorkerSecret {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'secret';
  readonly secret: DynamicSecret;
}

/** The runtime changed (a disk layer reloaded, /runtime_modify): its new final values. */
export interface WorkerRuntimeUpdate {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'runtime';
  readonly values: RuntimeValues;
}

/** A cluster's membership changed (discovery, health): every worker applies it in order. */
export interface WorkerClusterUpdate {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'cluster_update';
  readonly update: MembershipUpdate;
}

/**
 * A CDS cluster became active (warmed): build it from its configuration (workerClusterConfig
 * form) and membership, replacing the one of its name, whose pools drain.
 */
export interface WorkerClusterAdd {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'cluster_add';
  readonly config: ClusterConfig;
  readonly snapshot: ClusterSnapshot;
  /** The worker that interns the cluster's stat names: the workers share that out, as at init. */
  readonly declaredBy: number;
}

/** RDS brought a route configuration: every connection manager that names it routes new requests by it. */
export interface WorkerRouteConfigUpdate {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'route_config';
  readonly update: KeyedRouteConfig;
}

/** CDS removed a cluster: drop it; requests in flight finish on its draining pools. */
export interface WorkerClusterRemove {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'cluster_remove';
  readonly name: string;
}

/** Stop accepting, close HTTP connections after their responses per the drain strategy. */
export interface WorkerDrain {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'drain';
}

/** SIGUSR1 reached the supervisor: reopen the log file. */
export interface WorkerReopenLogs {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'reopen_logs';
}

/** Admin /healthcheck/fail (failed) or /healthcheck/ok: the health check filter and drain close follow it. */
export interface WorkerHealthCheck {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'health_check';
  readonly failed: boolean;
}

/**
 * LDS brought a listener on an address no listener of the worker has: its listen socket came
 * just before this message through the worker's handoff socket (listen_socket_handoff.ts).
 */
export interface WorkerListenerAdd {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'listener_add';
  readonly config: ListenerConfig;
}

/**
 * LDS changed a listener and kept its address: the new filter chains take the connections the
 * listener's socket accepts from now on, and the old ones' connections drain.
 */
export interface WorkerListenerUpdate {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'listener_update';
  readonly config: ListenerConfig;
  /** The old filter chains kept, with their connections, as new ones: unchanged, in a change of filter chains only. */
  readonly keptChains: readonly KeptChain[];
}

/** LDS removed a listener: it stops accepting and its connections drain. */
export interface WorkerListenerRemove {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'listener_remove';
  readonly name: string;
}

/** POST /drain_listeners: stop accepting on these listeners, after the drain sequence if graceful. */
export interface WorkerStopListeners {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'stop_listeners';
  readonly listeners: readonly string[];
  readonly graceful: boolean;
}

/** GET /memory: answer with a WorkerMemory carrying the same id. */
export interface WorkerMemoryRequest {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'memory_request';
  readonly id: number;
}

/** POST /stats/recentlookups/enable|disable: remember this many names (0: none). */
export interface WorkerRecentLookupsCapacity {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'recent_lookups_capacity';
  readonly capacity: number;
}

/** POST /stats/recentlookups/clear and /reset_counters: forget the names, restart the total. */
export interface WorkerRecentLookupsClear {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'recent_lookups_clear';
}

/** GET /stats/recentlookups: answer with a WorkerRecentLookups. */
export interface WorkerRecentLookupsRequest {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'recent_lookups_request';
  readonly id: number;
}

/** POST /logging with fine-grain logging: answer with a WorkerFileLoggers carrying the same id. */
export interface WorkerFileLoggersRequest {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'file_loggers_request';
  readonly id: number;
}

export interface WorkerShutdown {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'shutdown';
}

/** POST /logging changed logger levels: make the same change. */
export interface WorkerSetLogLevel {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'set_log_level';
  readonly change: LevelChange;
}

/** POST /cpuprofiler or /heapprofiler ?enable=y: profile into this worker's file under `profilePath`. */
export interface WorkerProfileStart {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'profile_start';
  readonly kind: ProfileKind;
  /** Echoed in the reply, so that a late reply to an earlier request is not taken for this one. */
  readonly id: number;
  readonly profilePath: string;
}

/** ?enable=n: stop and write the profile. */
export interface WorkerProfileStop {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'profile_stop';
  readonly kind: ProfileKind;
  readonly id: number;
}

export type SupervisorMessage =
  | WorkerInit
  | WorkerStart
  | WorkerDrain
  | WorkerReopenLogs
  | WorkerHealthCheck
  | WorkerShutdown
  | WorkerRuntimeUpdate
  | WorkerClusterUpdate
  | WorkerClusterAdd
  | WorkerClusterRemove
  | WorkerRouteConfigUpdate
  | WorkerListenerAdd
  | WorkerListenerUpdate
  | WorkerListenerRemove
  | WorkerSecret
  | WorkerSetLogLevel
  | WorkerProfileStart
  | WorkerProfileStop
  | WorkerStopListeners
  | WorkerMemoryRequest
  | WorkerRecentLookupsCapacity
  | WorkerRecentLookupsClear
  | WorkerRecentLookupsRequest
  | WorkerFileLoggersRequest;

/**
 * The worker's answer to its init: its handoff socket is bound, so the listen sockets of its
 * start may be sent. A worker is forked before the configuration is decoded (it loads its code
 * meanwhile), so its sockets cannot be inherited.
 */
export interface WorkerReceiving {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'receiving';
}

export interface WorkerReady {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'ready';
}

/**
 * The worker has interned its share of the clusters' stat names, which it does once it serves:
 * until every worker has, GET /stats waits, so that it lists every cluster's stats.
 */
export interface WorkerStatNamesDeclared {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'stat_names_declared';
}

export interface WorkerFatal {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'fatal';
  readonly message: string;
}

/** The answer to WorkerProfileStart (error null) or WorkerProfileStop. */
export interface WorkerProfileReply {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'profile_reply';
  readonly kind: ProfileKind;
  readonly id: number;
  /** The profile written (a stop), or null. */
  readonly file: string | null;
  /** Why the start or stop failed; for a stop, also `not profiling` (a worker started after the enable). */
  readonly error: string | null;
}

/** Waits on the stats region's locks since the previous report (--enable-mutex-tracing). */
export interface WorkerContention {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'contention';
  readonly stats: MutexStats;
}

/** The worker's file loggers and their levels, in answer to a WorkerFileLoggersRequest. */
export interface WorkerFileLoggers {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'file_loggers';
  readonly id: number;
  readonly loggers: readonly LoggerLevel[];
}

/** process.memoryUsage() of the worker, in answer to a WorkerMemoryRequest. */
export interface WorkerMemory {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'memory';
  readonly id: number;
  readonly usage: NodeJS.MemoryUsage;
}

/** The worker's lookups of stats by name string, in answer to a WorkerRecentLookupsRequest. */
export interface WorkerRecentLookups {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'recent_lookups';
  readonly id: number;
  readonly lookups: ProcessLookups;
}

/**
 * A host's consecutive failures of one kind reached their threshold (counted by every worker in
 * shared memory; only the worker whose failure reached it sends this): eject the host now.
 */
export interface WorkerOutlierConsecutiveFailure {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'outlier_consecutive_failure';
  readonly cluster: string;
  /** The host's slot; a slot freed and reused since has another generation. */
  readonly host: HostSlot;
  readonly failure: ConsecutiveFailure;
}

/**
 * Destinations the worker's ORIGINAL_DST balancer picked in `cluster` since its last report (at
 * once for one it has not reported lately): the supervisor makes a host of each one that is not
 * one yet and marks the others used, so that its cleanup keeps them.
 */
export interface WorkerHostsPicked {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'hosts_picked';
  readonly cluster: string;
  readonly addresses: readonly SocketAddress[];
}

/** The worker's overload manager's pressures or actions changed (src/overload). */
export interface WorkerOverloadReport extends OverloadReport {
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  readonly type: 'overload';
  readonly workerIndex: number;
}

export type WorkerMessage =
  | WorkerReceiving
  | WorkerReady
  | WorkerStatNamesDeclared
  | WorkerFatal
  | WorkerProfileReply
  | WorkerContention
  | WorkerMemory
  | WorkerRecentLookups
  | WorkerFileLoggers
  | WorkerOutlierConsecutiveFailure
  | WorkerHostsPicked
  | WorkerOverloadReport;

export function isMessage<T extends { v: number; type: string }>(m: unknown): m is T {
  return typeof m === 'object' && m !== null && (m as { v?: unknown }).v === WORKER_PROTOCOL_VERSION && typeof (m as { type?: unknown }).type === 'string';
}

/**
 * The bootstrap as a worker needs it: without the v3 JSON copies kept for /config_dump, which
 * would more than double the init message of a large configuration, and without the load
 * assignments' endpoints, which the membership snapshots (with the live policy) replace.
 */
export function workerBootstrap(bootstrap: Bootstrap): Bootstrap {
  return { ...bootstrap, source: null, clusters: bootstrap.clusters.map(workerClusterConfig) };
}

/** A cluster's configuration as a worker needs it: the same, for one cluster. */
export function workerClusterConfig(config: ClusterConfig): ClusterConfig {
  return { ...config, source: null, loadAssignment: { ...config.loadAssignment, endpoints: [] } };
}
