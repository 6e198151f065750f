import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterConfig } from '../../src/config/model';
import type { Logger } from '../../src/log/logger_api';
import type { Host } from '../../src/upstream/worker/host';
import { silentLogger } from '../helpers/data_plane';
import { balancer, host, ports, seeded, sequence } from '../helpers/load_balancer';
import type { RandomSource } from '../../src/common/random';

interface Options {
  readonly random: RandomSource;
  readonly active?: Map<Host, number>;
  readonly choiceCount?: number;
  readonly bias?: { defaultValue: number; runtimeKey: string };
  readonly runtime?: Record<string, string>;
  readonly log?: Logger;
}

function leastRequest(hosts: Host[], options: Options) {
  const config: Partial<ClusterConfig> = {
    lbPolicy: 'LEAST_REQUEST',
    leastRequestLbConfig: { choiceCount: options.choiceCount ?? 2, activeRequestBias: options.bias ?? null },
  };
  return balancer(hosts, { random: options.random, config, activeRequests: options.active, runtime: options.runtime, log: options.log }).lb;
}

function counts(values: readonly (number | null)[]): Map<number | null, number> {
  const out = new Map<number | null, number>();
  for (const v of values) out.set(v, (out.get(v) ?? 0) + 1);
  return out;
}

function near(actual: number | undefined, expected: number, tolerance: number, what: string): void {
  assert.ok(actual !== undefined && Math.abs(actual - expected) <= tolerance, `${what}: ${actual} is not ${expected} ± ${tolerance}`);
}

test('equal weights: of two samples, the host with fewer active requests', () => {
  const hosts = [host(80), host(81), host(82)];
  const active = new Map([[hosts[0], 5], [hosts[1], 0], [hosts[2], 3]]);
  // The first draw is the balancer's seed; then two samples per pick.
  const lb = leastRequest(hosts, { random: sequence(0, 0, 1, 2, 0, 1, 2, 0, 0), active });
  assert.deepEqual(ports(lb, 4), [81, 82, 81, 80]);
});

test('a later sample replaces the candidate only with strictly fewer active requests', () => {
  const hosts = [host(80), host(81), host(82)];
  const active = new Map([[hosts[0], 1], [hosts[1], 1], [hosts[2], 1]]);
  const lb = leastRequest(hosts, { random: sequence(0, 2, 1, 1, 0), active });
  assert.deepEqual(ports(lb, 2), [82, 81]);
});

test('choice_count samples: the least loaded of all of them', () => {
  const hosts = [host(80), host(81), host(82)];
  const active = new Map([[hosts[0], 2], [hosts[1], 1], [hosts[2], 0]]);
  assert.deepEqual(ports(leastRequest(hosts, { random: sequence(0, 0, 1, 2), active, choiceCount: 3 }), 1), [82]);
  assert.deepEqual(ports(leastRequest(hosts, { random: sequence(0, 0, 1, 2), active, choiceCount: 2 }), 1), [81]);
});

test('active requests are read at each pick', () => {
  const hosts = [host(80), host(81)];
  const active = new Map([[hosts[0], 0], [hosts[1], 1]]);
  const lb = leastRequest(hosts, { random: sequence(0, 0, 1, 0, 1), active });
  assert.deepEqual(ports(lb, 1), [80]);
  active.set(hosts[0], 2);
  assert.deepEqual(ports(lb, 1), [81]);
});

test('samples are drawn with replacement: a loaded host is still picked when both samples hit it', () => {
  const hosts = [host(80), host(81), host(82)];
  const active = new Map([[hosts[0], 10]]);
  const picks = counts(ports(leastRequest(hosts, { random: seeded(7), active }), 9000));
  // Both samples land on 80 with probability 1/9: about 1000 picks, sd 30. Without
  // replacement it would never be picked.
  near(picks.get(80), 1000, 150, 'picks of the loaded host');
  near(picks.get(81), 4000, 200, 'picks of 81');
  near(picks.get(82), 4000, 200, 'picks of 82');
});

test('idle hosts are preferred: with one host busy, the others share nearly all picks', () => {
  const hosts = [host(80), host(81), host(82), host(83)];
  const active = new Map([[hosts[3], 4]]);
  const picks = counts(ports(leastRequest(hosts, { random: seeded(11), active }), 8000));
  // 83 only when both samples hit it: 1/16 of picks.
  near(picks.get(83), 500, 100, 'picks of the busy host');
});

test('unequal weights: EDF over weight / (active + 1)', () => {
  const hosts = [host(80, { weight: 1 }), host(81, { weight: 2 }), host(82, { weight: 3 })];
  const idle = counts(ports(leastRequest(hosts, { random: sequence(0) }), 600));
  assert.deepEqual([...idle.entries()].sort(), [[80, 100], [81, 200], [82, 300]]);
  // 82 with 2 requests in flight weighs 3 / 3 = 1.
  const busy = counts(ports(leastRequest(hosts, { random: sequence(0), active: new Map([[hosts[2], 2]]) }), 400));
  near(busy.get(80), 100, 2, '80');
  near(busy.get(81), 200, 2, '81');
  near(busy.get(82), 100, 2, '82');
});

test('active_request_bias is the exponent: weight / (active + 1)^bias', () => {
  const hosts = [host(80, { weight: 1 }), host(81, { weight: 2 }), host(82, { weight: 3 })];
  // 82 weighs 3 / 2^2 = 0.75: picks in proportion 1 : 2 : 0.75.
  const bias = { defaultValue: 2, runtimeKey: 'lr.bias' };
  const picks = counts(ports(leastRequest(hosts, { random: sequence(0), active: new Map([[hosts[2], 1]]), bias }), 375));
  near(picks.get(80), 100, 2, '80');
  near(picks.get(81), 200, 2, '81');
  near(picks.get(82), 75, 2, '82');
});

test('bias 0 is plain weighted round robin', () => {
  const hosts = [host(80, { weight: 1 }), host(81, { weight: 2 }), host(82, { weight: 3 })];
  const active = new Map([[hosts[2], 50], [hosts[1], 7]]);
  const roundRobin = ports(balancer(hosts, { random: sequence(5) }).lb, 24);
  const bias = { defaultValue: 0, runtimeKey: 'lr.bias' };
  assert.deepEqual(ports(leastRequest(hosts, { random: sequence(5), active, bias }), 24), roundRobin);
  // The runtime overrides the default: 0 from the runtime is round robin too.
  const fromRuntime = { defaultValue: 1, runtimeKey: 'lr.bias' };
  assert.deepEqual(ports(leastRequest(hosts, { random: sequence(5), active, bias: fromRuntime, runtime: { 'lr.bias': '0' } }), 24), roundRobin);
  assert.notDeepEqual(ports(leastRequest(hosts, { random: sequence(5), active, bias: fromRuntime }), 24), roundRobin);
});

test('a negative bias is warned about and 1.0 is used', () => {
  const hosts = [host(80, { weight: 1 }), host(81, { weight: 2 }), host(82, { weight: 3 })];
  const active = new Map([[hosts[2], 2]]);
  const warnings: string[] = [];
  const log: Logger = { ...silentLogger, warn: (message) => warnings.push(message) };
  const bias = { defaultValue: 1, runtimeKey: 'lr.bias' };
  const negative = ports(leastRequest(hosts, { random: sequence(0), active, bias, runtime: { 'lr.bias': '-0.5' }, log }), 40);
  assert.deepEqual(negative, ports(leastRequest(hosts, { random: sequence(0), active }), 40));
  assert.deepEqual(warnings, ['upstream: invalid active request bias supplied (runtime key lr.bias), using 1.0']);
});

test('unhealthy hosts are not sampled; no hosts, no pick', () => {
  const hosts = [host(80), host(81, { health: 'UNHEALTHY' }), host(82), host(83)];
  const picks = counts(ports(leastRequest(hosts, { random: seeded(3) }), 300));
  assert.equal(picks.get(81), undefined);
  assert.equal(leastRequest([], { random: sequence(0) }).chooseHost(null), null);
});
