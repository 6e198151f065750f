// One state-of-the-world gRPC stream to a management server carrying the watches of one or more
// resource types (Envoy's GrpcMuxImpl with its GrpcStream): ADS puts every type on one stream,
// any other gRPC config source gets a stream of its own. Per type it keeps the last accepted
// version_info and the last nonce received: an accepted response is ACKed with the new version,
// a rejected one NACKed with the previous version and an error_detail naming the field. A stream
// that closes is opened again after a jittered exponential backoff, and each type's request is
// sent again with its last accepted version, so the server need not resend what we have.

import type { Clock } from '../../common/clock';
import type { Logger } from '../../log/logger_api';
import type { JsonObject } from '../json';
import type { ControlPlaneStats } from './control_plane_stats';
import type { DiscoveryWire } from './discovery_wire';
import type { GrpcChannel } from './grpc_channel';
import { GrpcStream } from './grpc_stream';
import type { ResourceDecoder } from './resource_decoder';
import type { ResourceType } from './resource_types';
import type { MuxWatch, MuxWatchCallbacks, XdsMux } from './xds_mux';
import type { RandomSource } from '../../common/random';

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

export class GrpcMux implements XdsMux {
  private readonly log: Logger;
  /** By type URL, in the order the types were first watched (the order of requests on a new stream). */
  private readonly types = new Map<string, TypeState>();
  private readonly stream: GrpcStream;

  constructor(channel: GrpcChannel, methodPath: string, setNodeOnFirstMessageOnly: boolean, private readonly deps: GrpcMuxDeps) {
    this.log = deps.log.forFile(__filename);
    this.stream = new GrpcStream(channel, methodPath, setNodeOnFirstMessageOnly, deps, {
      onStreamEstablished: () => {
        for (const [typeUrl, state] of this.types) {
          if (state.watches.size > 0) this.sendRequest(typeUrl, state);
        }
      },
      onReceiveMessage: (bytes) => this.onResponse(bytes),
      onEstablishmentFailure: () => {
        for (const state of this.types.values()) {
          for (const watch of state.watches) watch.callbacks.onConfigUpdateFailed('connection_failure', null);
        }
      },
    });
  }

  addWatch(typeUrl: string, type: ResourceType, names: readonly string[], callbacks: MuxWatchCallbacks): MuxWatch {
    let state = this.types.get(typeUrl);
    if (state === undefined) {
      state = { type, watches: new Set(), versionInfo: '', nonce: '', errorDetail: null };
      this.types.set(typeUrl, state);
    }
    const watch: Watch = { names: [...names], callbacks };
    state.watches.add(watch);
    if (this.stream.isOpen) this.sendRequest(typeUrl, state);
    else this.stream.establish();
    return { remove: () => this.removeWatch(typeUrl, state, watch) };
  }

  close(): void {
    this.stream.close();
  }

  private removeWatch(typeUrl: string, state: TypeState, watch: Watch): void {
    if (!state.watches.delete(watch)) return;
    // A stream nobody watches is closed (Envoy keeps it open); a later watch opens it again.
    if ([...this.types.values()].every((s) => s.watches.size === 0)) {
      this.stream.stop();
      this.deps.controlPlane.connected_state.set(0);
      return;
    }
    // The server learns the names that are no longer wanted, as in Envoy.
    if (watch.names.length > 0) this.sendRequest(typeUrl, state);
  }

  private async onResponse(bytes: Buffer): Promise<void> {
    let header;
    try {
      header = this.deps.wire.responseHeader(bytes);
    } catch (error) {
      this.log.warn(`${this.stream.methodPath}: ${(error as Error).message}; ignored`);
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
    const generation = this.stream.generation;
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
    if (this.stream.generation !== generation) return;
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
    const names = new Set<string>();
    for (const watch of state.watches) for (const name of watch.names) names.add(name);
    this.stream.send((node) =>
      this.deps.wire.encodeRequest({
        versionInfo: state.versionInfo,
        node,
        resourceNames: [...names],
        typeUrl,
        responseNonce: state.nonce,
        errorDetail: state.errorDetail,
      }),
    );
    state.errorDetail = null;
  }
}
