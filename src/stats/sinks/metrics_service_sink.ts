// The metrics_service sink (Envoy's MetricsServiceSink over GrpcMetricsStreamerImpl): a
// client-streaming MetricsService.StreamMetrics call to the service's cluster (or google_grpc
// target), a StreamMetricsMessage per flush. The stream is opened at a flush and its first
// message carries the node identifier; when the server ends it, or it fails, the next flush opens
// another, as Envoy does (no retry between flushes). While the call cannot take more (a server
// that stops reading), flushes are dropped rather than queued.

import type * as grpc from '@grpc/grpc-js';
import * as protojson from 'protobufjs/ext/protojson';
import type * as protobuf from 'protobufjs/light';
import type { JsonObject } from '../../config/json';
import type { ProtoSchema } from '../../config/schema';
import type { GrpcChannel } from '../../config/xds/grpc_channel';
import type { Logger } from '../../log/logger_api';
import { metricFamilies, type MetricFamilyOptions } from './metric_families';
import type { SinkSnapshot, StatsSink } from './stats_sink';

const STREAM_METRICS_MESSAGE = 'envoy.service.metrics.v3.StreamMetricsMessage';
const NODE = 'envoy.config.core.v3.Node';

/** The StreamMetrics method of each transport version (v2 and v3 messages share their field numbers). */
export const STREAM_METRICS_PATHS = {
  V2: '/envoy.service.metrics.v2.MetricsService/StreamMetrics',
  V3: '/envoy.service.metrics.v3.MetricsService/StreamMetrics',
} as const;

interface Stream {
  readonly client: grpc.Client;
  readonly call: grpc.ClientWritableStream<Buffer>;
  /** The last write was buffered: until 'drain', flushes are dropped. */
  congested: boolean;
}

export class MetricsServiceSink implements StatsSink {
  private stream: Stream | null = null;
  private readonly messageType: protobuf.Type;
  private readonly node: protobuf.Message;

  /** Lines under this file's name. */
  private readonly log: Logger;

  constructor(
    private readonly channel: GrpcChannel,
    private readonly methodPath: string,
    private readonly options: MetricFamilyOptions,
    schema: ProtoSchema,
    node: JsonObject,
    log: Logger,
  ) {
    this.log = log.forFile(__filename);
    this.messageType = schema.root.lookupType(STREAM_METRICS_MESSAGE);
    this.node = protojson.fromJson(schema.root.lookupType(NODE), node);
  }

  flush(snapshot: SinkSnapshot): void {
    const opening = this.stream === null;
    const stream = this.stream ?? this.open();
    if (stream === null || stream.congested) return;
    const message = { envoy_metrics: metricFamilies(snapshot, this.options), ...(opening ? { identifier: { node: this.node } } : {}) };
    stream.congested = !stream.call.write(Buffer.from(this.messageType.encode(message).finish()));
  }

  close(): void {
    const stream = this.stream;
    this.stream = null;
    if (stream === null) return;
    stream.call.end();
    stream.client.close();
  }

  private open(): Stream | null {
    const client = this.channel.openClient();
    if (client === null) {
      this.log.debug(`metrics service ${this.channel.describe()}: no host to connect to`);
      return null;
    }
    const identity = (bytes: Buffer) => bytes;
    const call = client.makeClientStreamRequest<Buffer, Buffer>(this.methodPath, identity, identity, (error) => {
      if (this.stream === stream) this.stream = null;
      client.close();
      this.log.debug(`metrics service ${this.channel.describe()}: stream closed${error ? `: ${error.code}, ${error.details}` : ''}`);
    });
    const stream: Stream = { client, call, congested: false };
    call.on('drain', () => (stream.congested = false));
    this.stream = stream;
    return stream;
  }
}
