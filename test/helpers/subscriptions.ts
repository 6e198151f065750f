// An xDS subscription factory for tests that build a cluster manager by hand: the real one,
// with unknown dynamic fields counted in `stats` (server.dynamic_unknown_fields) and
// control_plane.* there too. Management servers are reached through `overrides`: an ADS
// config, the addresses of the clusters envoy_grpc and REST sources name, a clock and a random
// source for backoff and jitter.

import { SystemClock } from '../../src/common/clock';
import { protoSchema } from '../../src/config/schema';
import { ResourceDecoder, type UnknownDynamicFields } from '../../src/config/xds/resource_decoder';
import { SubscriptionFactory, type SubscriptionFactoryDeps } from '../../src/config/xds/subscription_factory';
import type { Logger } from '../../src/log/logger_api';
import type { Scope } from '../../src/stats/stats';
import { mathRandom } from '../../src/common/random';

export type SubscriptionFactoryOverrides = Partial<Omit<SubscriptionFactoryDeps, 'schema' | 'decoder' | 'log' | 'stats'>>;

export function subscriptionFactory(stats: Scope, log: Logger, policy: UnknownDynamicFields = 'warn', overrides: SubscriptionFactoryOverrides = {}): SubscriptionFactory {
  const schema = protoSchema();
  const decoder = new ResourceDecoder(schema, policy, stats.counter('server.dynamic_unknown_fields'), log);
  return new SubscriptionFactory({
    schema,
    decoder,
    log,
    stats,
    clock: new SystemClock(),
    random: mathRandom,
    node: { id: 'test-node', cluster: 'test-cluster', user_agent_name: 'proxy' },
    adsConfig: null,
    clusterAddresses: () => [],
    ...overrides,
  });
}
