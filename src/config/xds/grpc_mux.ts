// One state-of-the-world gRPC stream to a management server carrying the watches of one or more
// resource types (Envoy's GrpcMuxImpl with its GrpcStream): ADS puts every type on one stream,
// any other gRPC config source gets a stream of its own. Per type it keeps the last accepted
// version_info and the last nonce received: an accepted response is ACKed with the new version,
// a rejected one NACKed with the previous version and an error_detail naming the field. A stream
// that closes is opened again after a jittered exponential backoff, and each type's request is
// sent again with its last accepted version, so the server need not resend what we have.

import type * as grpc from '@grpc/grpc-js';
import type { Clock, TimeoutHandle } from '../../common/clock';
import { JitteredBackOff } from '../../common/jittered_backoff';
import { SerialQueue } from '../../common/serial_queue';
import type { Logger } from '../../log/logger_api';
import type { JsonObject } from '../json';
import type { ControlPlaneStats } from './control_plane_stats';
import type { DiscoveryWire } from './discovery_wire';
import type { GrpcChannel } from './grpc_channel';
import type { ResourceDecoder } from './resource_decoder';
import type { ResourceType } from './resource_types';
import type { DecodedResource } from './subscription';
import type { RandomSource } from '../../common/random';

/** Envoy's GrpcStream backoff: the first retry within 500 ms, none later than 30 s. */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;

export interface GrpcMuxDeps {
  readonly wire: DiscoveryWire;
  readonly decoder: ResourceDecoder;
  readonly log: Logger;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly controlPlane: ControlPlaneStats;
  /** The bootstrap's node as config.core.v3.Node JSON, with the user agent. */
  readonly node: JsonObject;
}

/** What a mux tells a watch (a GrpcSubscription). */
export interface MuxWatchCallbacks {
  /**
   * A promise delays the ACK, and every later response of the stream, until it settles.
   * @throws Error (or rejects) to reject the update: every watch of the type is told, and the response NACKed
   */
  onConfigUpdate(resources: readonly DecodedResource[], versionInfo: string): void | Promise<void>;
  onConfigUpdateFailed(reason: 'connection_failure' | 'update_rejected', error: Error | null): void;
}

export interface MuxWatch {
  /** Stops the watch; the server is told the names it no longer needs. */
  remove(): void;
}

interface Watch {
  readonly names: readonly string[];
  readonly callbacks: MuxWatchCallbacks;
}

interface TypeState {
  readonly type: ResourceType;
  readonly watches: Set<Watch>;
  /** The last version accepted: what an ACK, a NACK and a resubscription carry. */
  versionInfo: string;
  nonce: string;
  /** The reason of the last rejection, sent once with the NACK. */
  errorDetail: string | null;
}

interface Stream {
  readonly client: grpc.Client;
  readonly call: grpc.ClientDuplexStream<Buffer, Buffer>;
}

export class GrpcMux {
  private readonly log: Logger;
  /** By type URL, in the order the types were first watched (the order of requests on a new stream). */
  private readonly types = new Map<string, TypeState>();
  private stream: Stream | null = null;
  private retryTimer: TimeoutHandle | null = null;
  private firstStreamRequest = true;
  private closed = false;
  private readonly backOff: JitteredBackOff;
  /** Responses are applied and answered one at a time, in order, as Envoy's one thread does. */
  private readonly responses = new SerialQueue();

  constructor(
    private readonly channel: GrpcChannel,
    private readonly methodPath: string,
    private readonly setNodeOnFirstMessageOnly: boolean,
    private readonly deps: GrpcMuxDeps,
  ) {
    this.log = deps.log.forFile(__filename);
    this.backOff = new JitteredBackOff(RETRY_BASE_MS, RETRY_MAX_MS, deps.random);
  }

  /** Watches `names` (every resource when empty) of a type; opens the stream if it is not open. */
  addWatch(typeUrl: string, type: ResourceType, names: readonly string[], callbacks: MuxWatchCallbacks): MuxWatch {
    let state = this.types.get(typeUrl);
    if (state === undefined) {
      state = { type, watches: new Set(), versionInfo: '', nonce: '', errorDetail: null };
      this.types.set(typeUrl, state);
    }
    const watch: Watch = { names: [...names], callbacks };
    state.watches.add(watch);
    if (this.stream !== null) this.sendRequest(typeUrl, state);
    else if (this.retryTimer === null) this.establishStream();
    return { remove: () => this.removeWatch(typeUrl, state, watch) };
  }

  /** Closes the stream and stops reconnecting; no callback follows. */
  close(): void {
    this.closed = true;
    this.stopStream();
  }

  private removeWatch(typeUrl: string, state: TypeState, watch: Watch): void {
    if (!state.watches.delete(watch)) return;
    // A stream nobody watches is closed (Envoy keeps it open); a later watch opens it again.
    if ([...this.types.values()].every((s) => s.watches.size === 0)) {
      this.stopStream();
      this.deps.controlPlane.connected_state.set(0);
      return;
    }
    // The server learns the names that are no longer wanted, as in Envoy.
    if (watch.names.length > 0 && this.stream !== null) this.sendRequest(typeUrl, state);
  }

  private stopStream(): void {
    if (this.retryTimer !== null) this.deps.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const stream = this.stream;
    this.stream = null;
    if (stream !== null) {
      stream.call.cancel();
      stream.client.close();
    }
  }

  private establishStream(): void {
    if (this.closed || this.stream !== null) return;
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
    const stream: Stream = { client, call };
    this.stream = stream;
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
    for (const [typeUrl, state] of this.types) {
      if (state.watches.size > 0) this.sendRequest(typeUrl, state);
    }
  }

  private onRemoteClose(status: grpc.StatusObject): void {
    this.log.warn(`${this.methodPath} gRPC config stream closed: ${status.code}, ${status.details}`);
    const stream = this.stream!;
    this.stream = null;
    stream.client.close();
    this.onEstablishmentFailure();
  }

  private onEstablishmentFailure(): void {
    this.deps.controlPlane.connected_state.set(0);
    for (const state of this.types.values()) {
      for (const watch of state.watches) watch.callbacks.onConfigUpdateFailed('connection_failure', null);
    }
    if (this.closed) return;
    this.retryTimer = this.deps.clock.setTimeout(() => {
      this.retryTimer = null;
      this.establishStream();
    }, this.backOff.nextMs());
  }

  private async onResponse(bytes: Buffer): Promise<void> {
    // A response means the server is there: the next failure starts the backoff afresh.
    this.backOff.reset();
    this.deps.controlPlane.connected_state.set(1);
    let header;
    try {
      header = this.deps.wire.responseHeader(bytes);
    } catch (error) {
      this.log.warn(`${this.methodPath}: ${(error as Error).message}; ignored`);
      return;
    }
    const state = this.types.get(header.typeUrl);
    if (state === undefined) {
      this.log.warn(`Ignoring the message for type URL ${header.typeUrl} as it has no current subscribers.`);
      return;
    }
    if (state.watches.size === 0) {
      // Nobody watches the type any more: an empty update is accepted, anything else NACKed by
      // keeping the version (the stream stays open for the other types).
      state.nonce = header.nonce;
      if (header.resourceCount === 0) state.versionInfo = header.versionInfo;
      else this.sendRequest(header.typeUrl, state);
      return;
    }
    const stream = this.stream;
    let errorDetail: string | null = null;
    try {
      await this.deliver(state, bytes, header.versionInfo);
      state.versionInfo = header.versionInfo;
    } catch (error) {
      const reason = error instanceof Error ? error : new Error(String(error));
      for (const watch of state.watches) watch.callbacks.onConfigUpdateFailed('update_rejected', reason);
      errorDetail = reason.message;
    }
    // Applied across a reconnection: the new stream has asked afresh, and this nonce is not its.
    if (this.stream !== stream) return;
    state.nonce = header.nonce;
    state.errorDetail = errorDetail;
    this.sendRequest(header.typeUrl, state);
  }

  /**
   * Hands each watch its resources: a wildcard watch all of them, a named watch those it names,
   * if any. The resources are decoded in slices, and a watch applying in slices holds the next.
   */
  private async deliver(state: TypeState, bytes: Buffer, versionInfo: string): Promise<void> {
    const { decoder, wire } = this.deps;
    const parts = wire.decodeResponse(bytes, decoder.unknownFieldsAllowed());
    decoder.report(parts.unknownFields);
    const { resources } = await decoder.decodeParts(parts, state.type);
    const byName = new Map(resources.map((resource) => [resource.name, resource]));
    for (const watch of [...state.watches]) {
      const found = watch.names.length === 0 ? resources : watch.names.flatMap((name) => byName.get(name) ?? []);
      if (found.length === 0 && watch.names.length > 0) continue;
      await watch.callbacks.onConfigUpdate(found, versionInfo);
    }
  }

  private sendRequest(typeUrl: string, state: TypeState): void {
    const stream = this.stream;
    if (stream === null) return;
    const names = new Set<string>();
    for (const watch of state.watches) for (const name of watch.names) names.add(name);
    const sendNode = !this.setNodeOnFirstMessageOnly || this.firstStreamRequest;
    const bytes = this.deps.wire.encodeRequest({
      versionInfo: state.versionInfo,
      node: sendNode ? this.deps.node : null,
      resourceNames: [...names],
      typeUrl,
      responseNonce: state.nonce,
      errorDetail: state.errorDetail,
    });
    stream.call.write(bytes);
    this.firstStreamRequest = false;
    state.errorDetail = null;
  }
}
