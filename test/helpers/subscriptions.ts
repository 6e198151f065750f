// An xDS subscription factory for tests that build a cluster manager by hand: the real one,
// with unknown dynamic fields counted in `stats` (server.dynamic_unknown_fields).

import { protoSchema } from '../../src/config/schema';
import { ResourceDecoder, type UnknownDynamicFields } from '../../src/config/xds/resource_decoder';
import { SubscriptionFactory } from '../../src/config/xds/subscription_factory';
import type { Logger } from '../../src/log/logger_api';
import type { Scope } from '../../src/stats/stats';

export function subscriptionFactory(stats: Scope, log: Logger, policy: UnknownDynamicFields = 'warn'): SubscriptionFactory {
  const schema = protoSchema();
  const decoder = new ResourceDecoder(schema, policy, stats.counter('server.dynamic_unknown_fields'), log);
  return new SubscriptionFactory({ schema, decoder, log });
}
