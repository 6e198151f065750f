// Makes the subscription a config source asks for. One per supervisor: the transports it opens
// (files now; management server streams, shared by every subscription of an ADS source) live
// as long as the server.

import type { Logger } from '../../log/logger_api';
import type { ProtoSchema } from '../schema';
import type { ConfigSourceConfig } from './config_source';
import { PathSubscription } from './path_subscription';
import type { ResourceDecoder, UnknownDynamicFields } from './resource_decoder';
import type { ResourceType } from './resource_types';
import type { Subscription, SubscriptionCallbacks, SubscriptionStats } from './subscription';

export interface SubscriptionFactoryDeps {
  readonly schema: ProtoSchema;
  readonly decoder: ResourceDecoder;
  readonly log: Logger;
}

/** A config source this build does not run; the capability check refuses it at load. */
export class UnsupportedConfigSourceError extends Error {
  constructor(kind: string) {
    super(`config source '${kind}' is not supported by this build`);
    this.name = 'UnsupportedConfigSourceError';
  }
}

export class SubscriptionFactory {
  constructor(private readonly deps: SubscriptionFactoryDeps) {}

  /** @throws UnsupportedConfigSourceError */
  subscribe(source: ConfigSourceConfig, type: ResourceType, callbacks: SubscriptionCallbacks, stats: SubscriptionStats): Subscription {
    switch (source.kind) {
      case 'path':
        return new PathSubscription(source.path, type, callbacks, stats, this.deps);
      default:
        throw new UnsupportedConfigSourceError(source.kind);
    }
  }
}

/** --reject-unknown-dynamic-fields wins over --ignore-unknown-dynamic-fields, as in Envoy. */
export function unknownDynamicFieldsPolicy(reject: boolean, ignore: boolean): UnknownDynamicFields {
  return reject ? 'reject' : ignore ? 'ignore' : 'warn';
}
