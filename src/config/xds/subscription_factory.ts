// Makes the subscription a config source asks for. One per supervisor: the transports it opens
// (files; gRPC streams to management servers, state of the world or delta, one per subscription
// or, for ADS, one shared by every subscription of an `ads` source; REST polling) live as long as
// their subscriptions.

import type { Clock } from '../../common/clock';
import type { Logger } from '../../log/logger_api';
import type { Scope } from '../../stats/stats';
import type { JsonObject } from '../json';
import type { ProtoSchema } from '../schema';
import { type ApiConfigSource, type ConfigSourceConfig, effectiveApiVersion } from '../config_source';
import { ControlPlaneStats } from './control_plane_stats';
import { DeltaDiscoveryWire } from './delta_discovery_wire';
import { DeltaGrpcMux } from './delta_grpc_mux';
import { adsMethodPath, deltaAdsMethodPath, deltaMethodPath, DiscoveryWire, restPath, streamMethodPath } from './discovery_wire';
import type { ClusterAddresses } from './cluster_hosts';
import { GrpcChannel } from './grpc_channel';
import { GrpcMux } from './grpc_mux';
import { GrpcSubscription } from './grpc_subscription';
import { PathSubscription } from './path_subscription';
import type { ResourceDecoder, UnknownDynamicFields } from './resource_decoder';
import { resourceTypeUrl, type ResourceType } from './resource_types';
import { RestSubscription } from './rest_subscription';
import type { Subscription, SubscriptionCallbacks, SubscriptionStats } from './subscription';
import type { XdsMux } from './xds_mux';
import type { RandomSource } from '../../common/random';

export interface SubscriptionFactoryDeps {
  readonly schema: ProtoSchema;
  readonly decoder: ResourceDecoder;
  readonly log: Logger;
  /** Times reconnects, polls and initial fetch timeouts. */
  readonly clock: Clock;
  /** Jitters reconnects and polls. */
  readonly random: RandomSource;
  /** The server's root scope: control_plane.* lives there. */
  readonly stats: Scope;
  /** The bootstrap's node (config.core.v3.Node JSON, user agent included), sent to management servers. */
  readonly node: JsonObject;
  /** dynamic_resources.ads_config: what an `ads` config source streams over; null when unset. */
  readonly adsConfig: ApiConfigSource | null;
  /** The hosts of the static cluster an envoy_grpc service or a REST source names. */
  readonly clusterAddresses: ClusterAddresses;
}

export class SubscriptionFactory {
  private readonly wire: DiscoveryWire;
  private readonly deltaWire: DeltaDiscoveryWire;
  private controlPlane: ControlPlaneStats | null = null;
  private adsMux: XdsMux | null = null;

  constructor(private readonly deps: SubscriptionFactoryDeps) {
    this.wire = new DiscoveryWire(deps.schema);
    this.deltaWire = new DeltaDiscoveryWire(deps.schema);
  }

  /** @throws Error for `ads` without ads_config (validation refuses it at load) */
  subscribe(source: ConfigSourceConfig, type: ResourceType, callbacks: SubscriptionCallbacks, stats: SubscriptionStats): Subscription {
    const typeUrl = resourceTypeUrl(type, source.resourceApiVersion);
    const grpcOptions = { typeUrl, type, initialFetchTimeoutMs: source.initialFetchTimeoutMs, clock: this.deps.clock, log: this.deps.log };
    switch (source.kind) {
      case 'path':
        return new PathSubscription(source.path, type, callbacks, stats, this.deps);
      case 'ads':
        return new GrpcSubscription(this.ads(), callbacks, stats, { ...grpcOptions, ownsMux: false });
      case 'api': {
        const api = source.api;
        const transport = effectiveApiVersion(api.transportApiVersion);
        if (api.apiType === 'REST') {
          const options = {
            cluster: api.clusterNames[0]!,
            path: restPath(type, transport),
            typeUrl,
            type,
            refreshDelayMs: api.refreshDelayMs,
            requestTimeoutMs: api.requestTimeoutMs,
            initialFetchTimeoutMs: source.initialFetchTimeoutMs,
          };
          return new RestSubscription(callbacks, stats, options, { ...this.deps, wire: this.wire });
        }
        const methodPath = api.apiType === 'DELTA_GRPC' ? deltaMethodPath(type, transport) : streamMethodPath(type, transport);
        return new GrpcSubscription(this.mux(api, methodPath), callbacks, stats, { ...grpcOptions, ownsMux: true });
      }
    }
  }

  /** Closes the ADS stream; the subscriptions close their own. */
  close(): void {
    this.adsMux?.close();
    this.adsMux = null;
  }

  private ads(): XdsMux {
    const config = this.deps.adsConfig;
    if (config === null) throw new Error('ADS must be configured to support an ADS config source');
    const transport = effectiveApiVersion(config.transportApiVersion);
    this.adsMux ??= this.mux(config, config.apiType === 'DELTA_GRPC' ? deltaAdsMethodPath(transport) : adsMethodPath(transport));
    return this.adsMux;
  }

  /** A stream of the protocol the source asks for: DELTA_GRPC, or state of the world. */
  private mux(api: ApiConfigSource, methodPath: string): XdsMux {
    const { decoder, log, clock, random, node, clusterAddresses, stats } = this.deps;
    this.controlPlane ??= new ControlPlaneStats(stats);
    const muxDeps = { decoder, log, clock, random, node, controlPlane: this.controlPlane };
    const channel = new GrpcChannel(api.grpcServices[0]!, clusterAddresses);
    if (api.apiType === 'DELTA_GRPC') return new DeltaGrpcMux(channel, methodPath, api.setNodeOnFirstMessageOnly, { ...muxDeps, wire: this.deltaWire });
    return new GrpcMux(channel, methodPath, api.setNodeOnFirstMessageOnly, { ...muxDeps, wire: this.wire });
  }
}

/** --reject-unknown-dynamic-fields wins over --ignore-unknown-dynamic-fields, as in Envoy. */
export function unknownDynamicFieldsPolicy(reject: boolean, ignore: boolean): UnknownDynamicFields {
  return reject ? 'reject' : ignore ? 'ignore' : 'warn';
}
