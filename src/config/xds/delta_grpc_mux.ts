// One delta (incremental) xDS stream carrying the watches of one or more resource types (Envoy's
// NewGrpcMuxImpl): ADS over DELTA_GRPC puts every type on one stream, any other DELTA_GRPC
// source gets a stream of its own. The server sends only what changed (resources added or
// updated, names removed); per type the mux holds the current set and hands each watch the whole
// of what it names, as a state-of-the-world update, so subscribers are the same for both
// protocols. A response is ACKed with its nonce, or NACKed with an error_detail naming the field,
// and then the held set stays as it was. A stream that reopens states its interest again, with
// the version of each resource held (initial_resource_versions).

import type { Logger } from '../../log/logger_api';
import type { DeltaDiscoveryWire } from './delta_discovery_wire';
import { DeltaSubscriptionState, watchResources } from './delta_subscription_state';
import type { GrpcChannel } from './grpc_channel';
import type { GrpcMuxDeps } from './grpc_mux';
import { GrpcStream } from './grpc_stream';
import type { ResourceType } from './resource_types';
import type { MuxWatch, MuxWatchCallbacks, XdsMux } from './xds_mux';

export interface DeltaGrpcMuxDeps extends Omit<GrpcMuxDeps, 'wire'> {
  readonly wire: DeltaDiscoveryWire;
}

interface Watch {
  readonly names: readonly string[];
  readonly callbacks: MuxWatchCallbacks;
}

interface TypeState {
  readonly type: ResourceType;
  readonly watches: Set<Watch>;
  readonly subscription: DeltaSubscriptionState;
}

/** What a request answers: the response's nonce, and the reason when it is a NACK. */
interface Answer {
  readonly nonce: string;
  readonly errorDetail: string | null;
}

export class DeltaGrpcMux implements XdsMux {
  private readonly log: Logger;
  /** By type URL, in the order the types were first watched (the order of requests on a new stream). */
  private readonly types = new Map<string, TypeState>();
  private readonly stream: GrpcStream;

  constructor(channel: GrpcChannel, methodPath: string, setNodeOnFirstMessageOnly: boolean, private readonly deps: DeltaGrpcMuxDeps) {
    this.log = deps.log.forFile(__filename);
    this.stream = new GrpcStream(channel, methodPath, setNodeOnFirstMessageOnly, deps, {
      onStreamEstablished: () => {
        for (const [typeUrl, state] of this.types) {
          state.subscription.streamOpened();
          if (state.watches.size > 0) this.sendRequest(typeUrl, state, null);
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
      state = { type, watches: new Set(), subscription: new DeltaSubscriptionState() };
      this.types.set(typeUrl, state);
    }
    const watch: Watch = { names: [...names], callbacks };
    state.watches.add(watch);
    this.updateInterest(state);
    if (this.stream.isOpen) this.sendRequest(typeUrl, state, null);
    else this.stream.establish();
    return { remove: () => this.removeWatch(typeUrl, state, watch) };
  }

  close(): void {
    this.stream.close();
  }

  private removeWatch(typeUrl: string, state: TypeState, watch: Watch): void {
    if (!state.watches.delete(watch)) return;
    this.updateInterest(state);
    // A stream nobody watches is closed (Envoy keeps it open); a later watch opens it again.
    if ([...this.types.values()].every((s) => s.watches.size === 0)) {
      this.stream.stop();
      this.deps.controlPlane.connected_state.set(0);
      return;
    }
    // The server learns the names that are no longer wanted (resource_names_unsubscribe).
    this.sendRequest(typeUrl, state, null);
  }

  private updateInterest(state: TypeState): void {
    const watches = [...state.watches];
    state.subscription.setInterest(
      watches.some((w) => w.names.length === 0),
      new Set(watches.flatMap((w) => w.names)),
    );
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
      this.log.warn(`Dropping received DeltaDiscoveryResponse (with version ${header.systemVersionInfo}) for non-existent subscription ${header.typeUrl}.`);
      return;
    }
    const generation = this.stream.generation;
    let errorDetail: string | null = null;
    try {
      await this.deliver(state, bytes, header.systemVersionInfo);
    } catch (error) {
      const reason = error instanceof Error ? error : new Error(String(error));
      for (const watch of state.watches) watch.callbacks.onConfigUpdateFailed('update_rejected', reason);
      errorDetail = reason.message;
    }
    // Applied across a reconnection: the new stream has stated its interest afresh, and this
    // nonce is not its.
    if (this.stream.generation !== generation) return;
    this.sendRequest(header.typeUrl, state, { nonce: header.nonce, errorDetail });
  }

  /**
   * Applies the response to the held set and hands each watch it concerns the whole of what it
   * names; the set is kept once every watch has accepted it. A watch applying in slices holds
   * the next.
   */
  private async deliver(state: TypeState, bytes: Buffer, systemVersionInfo: string): Promise<void> {
    const { decoder, wire } = this.deps;
    const parts = wire.decodeResponse(bytes, decoder.unknownFieldsAllowed());
    decoder.report(parts.unknownFields);
    const decoded = await decoder.decodeResources(parts.contents, state.type, (i) => parts.added[i]!.path);
    const update = state.subscription.apply(parts.added, decoded, parts.removed);
    for (const watch of [...state.watches]) {
      const resources = watchResources(update, watch.names);
      if (resources !== null) await watch.callbacks.onConfigUpdate(resources, systemVersionInfo);
    }
    state.subscription.commit(update);
  }

  /** An ACK or NACK always goes; a request of interest alone only when there is news for the server. */
  private sendRequest(typeUrl: string, state: TypeState, answer: Answer | null): void {
    if (!this.stream.isOpen || (answer === null && !state.subscription.requestPending())) return;
    const interest = state.subscription.nextRequest();
    this.stream.send((node) =>
      this.deps.wire.encodeRequest({
        typeUrl,
        node,
        ...interest,
        responseNonce: answer?.nonce ?? '',
        errorDetail: answer?.errorDetail ?? null,
      }),
    );
  }
}
