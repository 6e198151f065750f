// One bidirectional gRPC stream to a management server, opened again after it fails (Envoy's
// GrpcStream): the jittered exponential backoff, control_plane.connected_state, the node on
// the first request (or on each, without set_node_on_first_message_only), and the responses
// handed over one at a time, in order. What goes on it (state of the world or delta) is the
// mux's: it hears when the stream opens, what arrives, and when it fails.

import type * as grpc from '@grpc/grpc-js';
import type { Clock, TimeoutHandle } from '../../common/clock';
import { JitteredBackOff } from '../../common/jittered_backoff';
import type { RandomSource } from '../../common/random';
import { SerialQueue } from '../../common/serial_queue';
import type { Logger } from '../../log/logger_api';
import type { JsonObject } from '../json';
import type { ControlPlaneStats } from './control_plane_stats';
import type { GrpcChannel } from './grpc_channel';

/** Envoy's GrpcStream backoff: the first retry within 500 ms, none later than 30 s. */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;

export interface GrpcStreamDeps {
  readonly log: Logger;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly controlPlane: ControlPlaneStats;
  /** The bootstrap's node as config.core.v3.Node JSON, with the user agent. */
  readonly node: JsonObject;
}

export interface GrpcStreamCallbacks {
  /** The stream is open: each type's request goes out now. */
  onStreamEstablished(): void;
  /** A response; a promise holds the next one until it settles. */
  onReceiveMessage(bytes: Buffer): void | Promise<void>;
  /** The stream closed, or could not open; it is opened again after the backoff. */
  onEstablishmentFailure(): void;
}

interface OpenStream {
  readonly client: grpc.Client;
  readonly call: grpc.ClientDuplexStream<Buffer, Buffer>;
}

export class GrpcStream {
  private readonly log: Logger;
  private stream: OpenStream | null = null;
  /** Changes whenever a stream opens or ends: a response applied across it answers nothing. */
  private streamGeneration = 0;
  private retryTimer: TimeoutHandle | null = null;
  private firstStreamRequest = true;
  private closed = false;
  private readonly backOff: JitteredBackOff;
  /** Responses are applied and answered one at a time, in order, as Envoy's one thread does. */
  private readonly responses = new SerialQueue();

  constructor(
    private readonly channel: GrpcChannel,
    readonly methodPath: string,
    private readonly setNodeOnFirstMessageOnly: boolean,
    private readonly deps: GrpcStreamDeps,
    private readonly callbacks: GrpcStreamCallbacks,
  ) {
    this.log = deps.log.forFile(__filename);
    this.backOff = new JitteredBackOff(RETRY_BASE_MS, RETRY_MAX_MS, deps.random);
  }

  get isOpen(): boolean {
    return this.stream !== null;
  }

  /** Identifies the stream now open (or its absence); compared before answering a response. */
  get generation(): number {
    return this.streamGeneration;
  }

  /** Opens the stream unless it is open or a retry is already timed. */
  establish(): void {
    if (this.closed || this.stream !== null || this.retryTimer !== null) return;
    const client = this.channel.openClient();
    if (client === null) {
      this.log.warn(`gRPC config stream to ${this.channel.describe()}: no host to connect to`);
      this.onEstablishmentFailure();
      return;
    }
    const call = client.makeBidiStreamRequest<Buffer, Buffer>(
      this.methodPath,
      (bytes) => bytes,
      (bytes) => bytes,
    );
    const stream: OpenStream = { client, call };
    this.stream = stream;
    this.streamGeneration++;
    call.on('data', (bytes: Buffer) => {
      // A response still queued when its stream ends is dropped: its nonce means nothing to the next.
      this.responses.run(() => (this.stream === stream ? this.onResponse(bytes) : undefined));
    });
    call.on('status', (status: grpc.StatusObject) => {
      if (this.stream === stream) this.onRemoteClose(status);
    });
    // The status event reports every end of the call; an error event without a listener would throw.
    call.on('error', () => {});
    this.deps.controlPlane.connected_state.set(1);
    this.firstStreamRequest = true;
    this.callbacks.onStreamEstablished();
  }

  /**
   * Sends a request built for the node it must carry (null after the first request of the
   * stream under set_node_on_first_message_only). Nothing is sent when no stream is open.
   */
  send(build: (node: JsonObject | null) => Buffer): void {
    const stream = this.stream;
    if (stream === null) return;
    const sendNode = !this.setNodeOnFirstMessageOnly || this.firstStreamRequest;
    stream.call.write(build(sendNode ? this.deps.node : null));
    this.firstStreamRequest = false;
  }

  /** Ends the stream and any timed retry; `establish` opens a new one later. */
  stop(): void {
    if (this.retryTimer !== null) this.deps.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const stream = this.stream;
    this.stream = null;
    if (stream !== null) {
      this.streamGeneration++;
      stream.call.cancel();
      stream.client.close();
    }
  }

  /** Ends the stream for good: no retry, no callback follows. */
  close(): void {
    this.closed = true;
    this.stop();
  }

  private onResponse(bytes: Buffer): void | Promise<void> {
    // A response means the server is there: the next failure starts the backoff afresh.
    this.backOff.reset();
    this.deps.controlPlane.connected_state.set(1);
    return this.callbacks.onReceiveMessage(bytes);
  }

  private onRemoteClose(status: grpc.StatusObject): void {
    this.log.warn(`${this.methodPath} gRPC config stream closed: ${status.code}, ${status.details}`);
    const stream = this.stream!;
    this.stream = null;
    this.streamGeneration++;
    stream.client.close();
    this.onEstablishmentFailure();
  }

  private onEstablishmentFailure(): void {
    this.deps.controlPlane.connected_state.set(0);
    this.callbacks.onEstablishmentFailure();
    if (this.closed) return;
    this.retryTimer = this.deps.clock.setTimeout(() => {
      this.retryTimer = null;
      this.establish();
    }, this.backOff.nextMs());
  }
}
