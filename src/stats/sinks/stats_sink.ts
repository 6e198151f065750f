// A stats sink as the supervisor runs it (Envoy's Stats::Sink): at every stats_flush_interval
// tick it is handed what the stats are then, and sends them on. Sinks run in the supervisor
// only, which owns the stats region; the workers never see them.

import type { ClusterAddresses } from '../../config/xds/cluster_hosts';
import type { JsonObject } from '../../config/json';
import type { StatsSinkConfig } from '../../config/model';
import type { ProtoSchema } from '../../config/schema';
import type { HistogramBucketSettings } from '../../admin/stats/histogram_bucket_settings';
import type { Logger } from '../../log/logger_api';
import type { HistogramSample, ScalarList } from '../sample';
import type { Scope } from '../stats';
import type { TagProducer } from '../tag_producer';

/** One flush: the stats as they are at a tick. */
export interface SinkSnapshot {
  /** Counters and gauges now. */
  readonly scalars: ScalarList;
  /** Each counter's increase since the previous flush, by position in `scalars` (0 for a gauge). */
  readonly counterDeltas: Float64Array;
  /** Every histogram, its `interval` the samples since the previous flush. */
  readonly histograms: readonly HistogramSample[];
  /** Wall clock time of the flush, milliseconds since the epoch. */
  readonly timestampMs: number;
}

export interface StatsSink {
  /** Sends the snapshot on; a peer that is away loses it (the next flush tries again), as in Envoy. */
  flush(snapshot: SinkSnapshot): void;
  /** Closes its sockets and streams. */
  close(): void;
}

/** What the supervisor gives the sinks it creates. */
export interface StatsSinkContext {
  /** The hosts of a static cluster now, for a sink that connects through one. */
  readonly clusterAddresses: ClusterAddresses;
  /** The node as management servers see it (config.core.v3.Node, snake_case). */
  readonly node: JsonObject;
  /** stats_config's tag extraction, for the sinks that send tags. */
  readonly tags: TagProducer;
  /** The buckets of each histogram, as /stats/prometheus shows them. */
  readonly histogramBuckets: HistogramBucketSettings;
  readonly schema: ProtoSchema;
  /** The root scope, for a sink's own stats (statsd.cx_overflow). */
  readonly stats: Scope;
  readonly log: Logger;
}

/** Creates the sink a proxy.stats_sinks descriptor built the model of. */
export type StatsSinkFactory = (config: StatsSinkConfig, context: StatsSinkContext) => StatsSink;
