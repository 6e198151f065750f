import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_OVERPROVISIONING_FACTOR, type LbSubsetConfig, type Locality } from '../../src/config/model';
import { HealthFlag } from '../../src/upstream/shared/health_flags';
import type { Host } from '../../src/upstream/worker/host';
import { connectionContext, type LoadBalancerContext, withMetadataMatch } from '../../src/upstream/worker/lb/load_balancer';
import { type LoadBalancerFactory, LOAD_BALANCERS } from '../../src/upstream/worker/lb/load_balancer_registry';
import { SubsetLoadBalancer } from '../../src/upstream/worker/lb/subset_load_balancer';
import type { PrioritySet } from '../../src/upstream/worker/priority_set';
import { staticCluster } from '../helpers/data_plane';
import { balancerParams, type BalancerOptions, host, type HostSpec, seeded, sequence } from '../helpers/load_balancer';

const ROUND_ROBIN = LOAD_BALANCERS.get('ROUND_ROBIN')!;

const NO_SUBSETS: LbSubsetConfig = {
  fallbackPolicy: 'NO_FALLBACK',
  defaultSubset: {},
  subsetSelectors: [],
  localityWeightAware: false,
  scaleLocalityWeight: false,
  panicModeAny: false,
  listAsAny: false,
};

/** A selector of `keys` with no fallback of its own. */
const selector = (...keys: string[]) => ({ keys, fallbackPolicy: 'NOT_DEFINED' as const, fallbackKeysSubset: [] });

/** A host whose `proxy.lb` endpoint metadata is `lb` (none when null). */
function lbHost(port: number, lb: Record<string, unknown> | null, spec: HostSpec = {}): Host {
  return host(port, { ...spec, metadata: lb === null ? {} : { 'proxy.lb': lb } });
}

/** The subset balancer over `hosts` with round robin inside, and the priority sets it built. */
function subsetLb(hosts: readonly Host[], config: Partial<LbSubsetConfig>, options: BalancerOptions = {}) {
  const params = balancerParams(hosts, { random: sequence(0), ...options });
  const prioritySets: PrioritySet[] = [];
  const inner: LoadBalancerFactory = {
    policy: 'ROUND_ROBIN',
    create(innerParams) {
      prioritySets.push(innerParams.prioritySet);
      return ROUND_ROBIN.create(innerParams);
    },
  };
  const lb = new SubsetLoadBalancer({ ...NO_SUBSETS, ...config }, inner, params);
  const stats = params.info.stats;
  return {
    lb,
    prioritySets,
    update(next: readonly Host[]) {
      params.prioritySet.update(next, DEFAULT_OVERPROVISIONING_FACTOR);
      lb.refresh();
    },
    stat: (name: 'lb_subsets_selected' | 'lb_subsets_fallback' | 'lb_subsets_fallback_panic' | 'lb_subsets_created' | 'lb_subsets_removed') => stats.counters[name].value(),
    active: () => stats.gauges.lb_subsets_active.value(),
  };
}

/** A context asking for `criteria` (null: a route without metadata_match). */
function match(criteria: Record<string, unknown> | null, base: LoadBalancerContext = connectionContext(null)): LoadBalancerContext {
  const metadataMatch = criteria === null ? null : Object.entries(criteria).sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, value]) => ({ name, value }));
  return withMetadataMatch(base, metadataMatch);
}

/** The ports of `n` picks for `context` (null where there was no host). */
function picks(lb: SubsetLoadBalancer, context: LoadBalancerContext | null, n: number): (number | null)[] {
  return Array.from({ length: n }, () => lb.chooseHost(context)?.port ?? null);
}

/** The distinct ports of 12 picks, sorted. */
function reached(lb: SubsetLoadBalancer, context: LoadBalancerContext | null): (number | null)[] {
  return [...new Set(picks(lb, context, 12))].sort();
}

// 80: v1/prod, 81: v1/dev, 82: v2/prod, 83: no proxy.lb metadata, 84: a version only.
function fleet(): Host[] {
  return [
    lbHost(80, { version: 'v1', stage: 'prod' }),
    lbHost(81, { version: 'v1', stage: 'dev' }),
    lbHost(82, { version: 'v2', stage: 'prod' }),
    lbHost(83, null),
    lbHost(84, { version: 'v3' }),
  ];
}

test('a subset per combination of values of each selector; hosts lacking a key are in none', { timeout: 5000 }, () => {
  const { lb, stat, active } = subsetLb(fleet(), { subsetSelectors: [selector('version'), selector('stage', 'version')] });
  // version: v1, v2, v3; version+stage: v1/prod, v1/dev, v2/prod.
  assert.equal(active(), 6);
  assert.equal(stat('lb_subsets_created'), 6);
  assert.deepEqual(picks(lb, match({ version: 'v1' }), 4), [80, 81, 80, 81]);
  assert.deepEqual(reached(lb, match({ version: 'v3' })), [84]);
  assert.deepEqual(reached(lb, match({ version: 'v1', stage: 'dev' })), [81]);
  assert.deepEqual(reached(lb, match({ version: 'v2', stage: 'prod' })), [82]);
  assert.equal(stat('lb_subsets_selected'), 4 + 3 * 12);
  // No selector has `stage` alone, and none has v3/prod: no subset, and NO_FALLBACK.
  assert.deepEqual(reached(lb, match({ stage: 'prod' })), [null]);
  assert.deepEqual(reached(lb, match({ version: 'v3', stage: 'prod' })), [null]);
  assert.equal(stat('lb_subsets_selected'), 4 + 3 * 12);
  assert.equal(stat('lb_subsets_fallback'), 0);
});

test('values compare as protobuf Values: by kind, numbers by value, Struct fields in any order', { timeout: 5000 }, () => {
  const hosts = [lbHost(80, { build: 1, cfg: { a: 1, b: [true, null] } }), lbHost(81, { build: '1', cfg: { a: 1 } })];
  const { lb } = subsetLb(hosts, { subsetSelectors: [selector('build'), selector('cfg')] });
  assert.deepEqual(reached(lb, match({ build: 1.0 })), [80]);
  assert.deepEqual(reached(lb, match({ build: '1' })), [81]);
  assert.deepEqual(reached(lb, match({ build: true })), [null]);
  assert.deepEqual(reached(lb, match({ cfg: { b: [true, null], a: 1 } })), [80]);
  assert.deepEqual(reached(lb, match({ cfg: { a: 1, b: [true] } })), [null]);
  assert.deepEqual(reached(lb, match({ cfg: { a: 1 } })), [81]);
});

test('without criteria the top-level fallback decides: NO_FALLBACK, ANY_ENDPOINT, DEFAULT_SUBSET', { timeout: 5000 }, () => {
  const selectors = [selector('version')];
  const noCriteria = [null, match(null), match({})];
  const none = subsetLb(fleet(), { subsetSelectors: selectors });
  for (const context of noCriteria) assert.deepEqual(reached(none.lb, context), [null]);
  assert.equal(none.stat('lb_subsets_fallback'), 0);

  const any = subsetLb(fleet(), { subsetSelectors: selectors, fallbackPolicy: 'ANY_ENDPOINT' });
  for (const context of noCriteria) assert.deepEqual(reached(any.lb, context), [80, 81, 82, 83, 84]);
  assert.equal(any.stat('lb_subsets_fallback'), 36);
  assert.equal(any.stat('lb_subsets_selected'), 0);

  const byDefault = subsetLb(fleet(), { subsetSelectors: selectors, fallbackPolicy: 'DEFAULT_SUBSET', defaultSubset: { stage: 'prod' } });
  for (const context of noCriteria) assert.deepEqual(reached(byDefault.lb, context), [80, 82]);
  assert.equal(byDefault.stat('lb_subsets_fallback'), 36);

  // An empty default_subset matches every host, with metadata or without.
  const everyHost = subsetLb(fleet(), { subsetSelectors: selectors, fallbackPolicy: 'DEFAULT_SUBSET' });
  assert.deepEqual(reached(everyHost.lb, null), [80, 81, 82, 83, 84]);
});

test('no matching subset: the selector with the criteria keys decides, NOT_DEFINED deferring to the top level', { timeout: 5000 }, () => {
  const v9 = match({ version: 'v9' });
  const defaultSubset = { version: 'v2' };
  const cases: { top: LbSubsetConfig['fallbackPolicy']; own: LbSubsetConfig['subsetSelectors'][number]['fallbackPolicy']; want: (number | null)[]; fallback: number }[] = [
    { top: 'NO_FALLBACK', own: 'NOT_DEFINED', want: [null], fallback: 0 },
    { top: 'ANY_ENDPOINT', own: 'NOT_DEFINED', want: [80, 81, 82, 83, 84], fallback: 12 },
    { top: 'DEFAULT_SUBSET', own: 'NOT_DEFINED', want: [82], fallback: 12 },
    // A selector's own fallback is taken without counting lb_subsets_fallback, as in Envoy.
    { top: 'ANY_ENDPOINT', own: 'NO_FALLBACK', want: [null], fallback: 0 },
    { top: 'NO_FALLBACK', own: 'ANY_ENDPOINT', want: [80, 81, 82, 83, 84], fallback: 0 },
    { top: 'NO_FALLBACK', own: 'DEFAULT_SUBSET', want: [82], fallback: 0 },
    { top: 'ANY_ENDPOINT', own: 'DEFAULT_SUBSET', want: [82], fallback: 0 },
    { top: 'DEFAULT_SUBSET', own: 'ANY_ENDPOINT', want: [80, 81, 82, 83, 84], fallback: 0 },
  ];
  for (const { top, own, want, fallback } of cases) {
    const subsets = { fallbackPolicy: top, defaultSubset, subsetSelectors: [{ ...selector('version'), fallbackPolicy: own }] };
    const { lb, stat } = subsetLb(fleet(), subsets);
    assert.deepEqual(reached(lb, v9), want, `${top} x ${own}`);
    assert.equal(stat('lb_subsets_fallback'), fallback, `${top} x ${own}`);
    // Criteria whose keys are no selector's always take the top-level fallback.
    const topOnly = subsetLb(fleet(), subsets);
    assert.deepEqual(reached(topOnly.lb, match({ zone: 'a' })), { NO_FALLBACK: [null], ANY_ENDPOINT: [80, 81, 82, 83, 84], DEFAULT_SUBSET: [82] }[top], `${top} x ${own}, other keys`);
  }
});

test('KEYS_SUBSET retries with the criteria reduced to fallback_keys_subset, then that selector\'s own rules', { timeout: 5000 }, () => {
  const hosts = [
    lbHost(80, { app: 'a', version: 'v1', stage: 'prod' }),
    lbHost(81, { app: 'a', version: 'v1', stage: 'dev' }),
    lbHost(82, { app: 'a', version: 'v2', stage: 'prod' }),
    lbHost(83, { app: 'b', version: 'v1', stage: 'prod' }),
  ];
  const subsetSelectors = [
    { keys: ['app', 'version', 'stage'], fallbackPolicy: 'KEYS_SUBSET' as const, fallbackKeysSubset: ['app', 'version'] },
    { keys: ['app', 'version'], fallbackPolicy: 'KEYS_SUBSET' as const, fallbackKeysSubset: ['app'] },
    selector('app'),
  ];
  const { lb, stat } = subsetLb(hosts, { subsetSelectors, fallbackPolicy: 'ANY_ENDPOINT' });
  // The exact subset exists: no fallback.
  assert.deepEqual(reached(lb, match({ app: 'a', version: 'v1', stage: 'dev' })), [81]);
  // No canary: app a, version v1.
  assert.deepEqual(reached(lb, match({ app: 'a', version: 'v1', stage: 'canary' })), [80, 81]);
  // No a/v3 either: app a.
  assert.deepEqual(reached(lb, match({ app: 'a', version: 'v3', stage: 'canary' })), [80, 81, 82]);
  assert.equal(stat('lb_subsets_selected'), 36);
  assert.equal(stat('lb_subsets_fallback'), 0);
  // No app c at any level: the [app] selector defers to the top level (ANY_ENDPOINT).
  assert.deepEqual(reached(lb, match({ app: 'c', version: 'v1', stage: 'prod' })), [80, 81, 82, 83]);
  assert.equal(stat('lb_subsets_fallback'), 12);
  assert.equal(stat('lb_subsets_selected'), 36);
});

test('KEYS_SUBSET keeps the caller\'s context: hash key, retries and hosts to avoid', { timeout: 5000 }, () => {
  const hosts = [lbHost(80, { version: 'v1', stage: 'prod' }), lbHost(81, { version: 'v1', stage: 'dev' })];
  const subsetSelectors = [{ keys: ['version', 'stage'], fallbackPolicy: 'KEYS_SUBSET' as const, fallbackKeysSubset: ['version'] }, selector('version')];
  const { lb } = subsetLb(hosts, { subsetSelectors });
  const avoid80: LoadBalancerContext = { hashKey: null, metadataMatch: null, downstream: null, hostSelectionRetryCount: 1, shouldSelectAnotherHost: (h) => h.port === 80 };
  assert.deepEqual(picks(lb, match({ version: 'v1', stage: 'canary' }, avoid80), 4), [81, 81, 81, 81]);
});

test('DEFAULT_SUBSET without matching hosts is no host; panic_mode_any then picks any host', { timeout: 5000 }, () => {
  const subsets = { subsetSelectors: [selector('version')], fallbackPolicy: 'DEFAULT_SUBSET' as const, defaultSubset: { version: 'v9' } };
  const plain = subsetLb(fleet(), subsets);
  assert.deepEqual(reached(plain.lb, match({ version: 'v7' })), [null]);
  assert.deepEqual(reached(plain.lb, null), [null]);
  assert.equal(plain.stat('lb_subsets_fallback'), 0);

  const panic = subsetLb(fleet(), { ...subsets, panicModeAny: true });
  assert.deepEqual(reached(panic.lb, match({ version: 'v7' })), [80, 81, 82, 83, 84]);
  assert.deepEqual(reached(panic.lb, null), [80, 81, 82, 83, 84]);
  assert.equal(panic.stat('lb_subsets_fallback_panic'), 24);
  assert.equal(panic.stat('lb_subsets_fallback'), 0);
  // A matching subset is used as it is: panic mode is for the fallback only.
  assert.deepEqual(reached(panic.lb, match({ version: 'v1' })), [80, 81]);
  assert.equal(panic.stat('lb_subsets_fallback_panic'), 24);
});

test('panic_mode_any applies to a configured fallback only, as in Envoy', { timeout: 5000 }, () => {
  // NO_FALLBACK: nothing to panic from.
  const none = subsetLb(fleet(), { subsetSelectors: [selector('version')], panicModeAny: true });
  assert.deepEqual(reached(none.lb, match({ version: 'v9' })), [null]);
  // A selector's NO_FALLBACK neither.
  const own = subsetLb(fleet(), { subsetSelectors: [{ ...selector('version'), fallbackPolicy: 'NO_FALLBACK' }], fallbackPolicy: 'ANY_ENDPOINT', panicModeAny: true });
  assert.deepEqual(reached(own.lb, match({ version: 'v9' })), [null]);
  assert.equal(none.stat('lb_subsets_fallback_panic') + own.stat('lb_subsets_fallback_panic'), 0);
});

test('a matching subset whose balancer finds no host is no host, without fallback (fail_traffic_on_panic)', { timeout: 5000 }, () => {
  const common = staticCluster('c', []).commonLbConfig;
  const commonLbConfig = { ...common, zoneAware: { ...common.zoneAware, failTrafficOnPanic: true } };
  const hosts = [lbHost(80, { version: 'v1' }, { health: 'UNHEALTHY' }), lbHost(81, { version: 'v2' })];
  const { lb, stat } = subsetLb(hosts, { subsetSelectors: [selector('version')], fallbackPolicy: 'ANY_ENDPOINT', panicModeAny: true }, { config: { commonLbConfig } });
  assert.deepEqual(reached(lb, match({ version: 'v1' })), [null]);
  assert.equal(stat('lb_subsets_selected'), 12);
  assert.equal(stat('lb_subsets_fallback') + stat('lb_subsets_fallback_panic'), 0);
  // The fallback in panic finds none either; panic mode's balancer over the same hosts neither.
  const fallback = subsetLb(hosts, { subsetSelectors: [selector('version')], fallbackPolicy: 'DEFAULT_SUBSET', defaultSubset: { version: 'v1' }, panicModeAny: true }, { config: { commonLbConfig } });
  assert.deepEqual(reached(fallback.lb, null), [81]);
  assert.equal(fallback.stat('lb_subsets_fallback_panic'), 12);
});

test('list_as_any: a list value puts the host in a subset per element, and matches any of them', { timeout: 5000 }, () => {
  const hosts = [lbHost(80, { tags: ['a', 'b'], zone: ['x', 'y'] }), lbHost(81, { tags: 'a', zone: 'x' }), lbHost(82, { tags: ['a', 'a'], zone: 'y' })];
  const subsetSelectors = [selector('tags'), selector('tags', 'zone')];
  const any = subsetLb(hosts, { subsetSelectors, listAsAny: true, fallbackPolicy: 'DEFAULT_SUBSET', defaultSubset: { tags: 'b' } });
  assert.deepEqual(reached(any.lb, match({ tags: 'a' })), [80, 81, 82]);
  assert.deepEqual(reached(any.lb, match({ tags: 'b' })), [80]);
  assert.deepEqual(reached(any.lb, match({ tags: 'a', zone: 'y' })), [80, 82]);
  assert.deepEqual(reached(any.lb, match({ tags: 'b', zone: 'x' })), [80]);
  // A host listing a value twice is in its subset once.
  assert.deepEqual(picks(any.lb, match({ tags: 'a', zone: 'y' }), 4), [80, 82, 80, 82]);
  // The default subset matches lists the same way.
  assert.deepEqual(reached(any.lb, null), [80]);
  // tags a, b; a/x, a/y, b/x, b/y.
  assert.equal(any.active(), 6);

  const exact = subsetLb(hosts, { subsetSelectors, fallbackPolicy: 'DEFAULT_SUBSET', defaultSubset: { tags: 'b' } });
  assert.deepEqual(reached(exact.lb, match({ tags: 'a' })), [81]);
  assert.deepEqual(reached(exact.lb, match({ tags: ['a', 'b'] })), [80]);
  assert.deepEqual(reached(exact.lb, match({ tags: 'b', zone: 'x' })), [null]);
  assert.deepEqual(reached(exact.lb, null), [null]);
});

test('refresh: subsets follow membership and metadata; emptied ones stay inactive and count as removed', { timeout: 5000 }, () => {
  const hosts = fleet();
  const { lb, update, stat, active } = subsetLb(hosts, { subsetSelectors: [selector('version')], fallbackPolicy: 'ANY_ENDPOINT' });
  assert.deepEqual([active(), stat('lb_subsets_created'), stat('lb_subsets_removed')], [3, 3, 0]);

  // A new version: a new subset.
  const v4 = lbHost(85, { version: 'v4' });
  update([...hosts, v4]);
  assert.deepEqual(reached(lb, match({ version: 'v4' })), [85]);
  assert.deepEqual([active(), stat('lb_subsets_created'), stat('lb_subsets_removed')], [4, 4, 0]);

  // v2's only host leaves: its subset empties, and v2 falls back.
  const withoutV2 = [...hosts.filter((h) => h.port !== 82), v4];
  update(withoutV2);
  assert.deepEqual([active(), stat('lb_subsets_created'), stat('lb_subsets_removed')], [3, 4, 1]);
  const fallbacks = stat('lb_subsets_fallback');
  assert.deepEqual(reached(lb, match({ version: 'v2' })), [80, 81, 83, 84, 85]);
  assert.equal(stat('lb_subsets_fallback'), fallbacks + 12);

  // It comes back: the kept subset is active again, counted as created.
  update([...withoutV2, hosts[2]]);
  assert.deepEqual(reached(lb, match({ version: 'v2' })), [82]);
  assert.deepEqual([active(), stat('lb_subsets_created'), stat('lb_subsets_removed')], [4, 5, 1]);

  // Metadata changes without membership changes regroup the hosts.
  hosts[1].metadata = { 'proxy.lb': { version: 'v4' } };
  update([...withoutV2, hosts[2]]);
  assert.deepEqual(reached(lb, match({ version: 'v1' })), [80]);
  assert.deepEqual(reached(lb, match({ version: 'v4' })), [81, 85]);
  assert.deepEqual([active(), stat('lb_subsets_created'), stat('lb_subsets_removed')], [4, 5, 1]);
});

test('refresh: health changes reach the subsets and their fallbacks', { timeout: 5000 }, () => {
  const hosts = [lbHost(80, { version: 'v1' }), lbHost(81, { version: 'v1' }), lbHost(82, { version: 'v1' }), lbHost(83, { version: 'v2' })];
  const { lb, update, active } = subsetLb(hosts, { subsetSelectors: [selector('version')], fallbackPolicy: 'ANY_ENDPOINT' });
  hosts[1].healthFlags |= HealthFlag.FAILED_ACTIVE_HC;
  update(hosts);
  assert.deepEqual(reached(lb, match({ version: 'v1' })), [80, 82]);
  assert.deepEqual(reached(lb, null), [80, 82, 83]);
  // An unhealthy host still makes its subset active: the subset's balancer (here in panic) decides.
  hosts[3].healthFlags |= HealthFlag.FAILED_ACTIVE_HC;
  update(hosts);
  assert.equal(active(), 2);
  assert.deepEqual(reached(lb, match({ version: 'v2' })), [83]);
});

test('priorities inside a subset: its unhealthy P0 hosts give way to its P1 hosts', { timeout: 5000 }, () => {
  const hosts = [
    lbHost(80, { version: 'v1' }, { health: 'UNHEALTHY' }),
    lbHost(81, { version: 'v2' }),
    lbHost(90, { version: 'v1' }, { priority: 1 }),
    lbHost(91, { version: 'v2' }, { priority: 1 }),
  ];
  const { lb } = subsetLb(hosts, { subsetSelectors: [selector('version')] });
  assert.deepEqual(reached(lb, match({ version: 'v1' })), [90]);
  assert.deepEqual(reached(lb, match({ version: 'v2' })), [81]);
});

test('weights inside a subset: picks in proportion, hosts outside it never (seeded)', { timeout: 5000 }, () => {
  const hosts = [
    lbHost(80, { version: 'v1' }, { weight: 1 }),
    lbHost(81, { version: 'v1' }, { weight: 2 }),
    lbHost(82, { version: 'v1' }, { weight: 3 }),
    lbHost(83, { version: 'v2' }, { weight: 50 }),
  ];
  const { lb } = subsetLb(hosts, { subsetSelectors: [selector('version')] }, { random: seeded(1234) });
  const counts = new Map<number | null, number>();
  for (const port of picks(lb, match({ version: 'v1' }), 6000)) counts.set(port, (counts.get(port) ?? 0) + 1);
  assert.deepEqual([...counts.entries()].sort(), [[80, 1000], [81, 2000], [82, 3000]]);
});

test('locality_weight_aware and scale_locality_weight set the subset\'s locality weights', { timeout: 5000 }, () => {
  const locality = (zone: string): Locality => ({ region: 'r', zone, subZone: '' });
  const at = (port: number, zone: string, weight: number, version: string) => {
    const h = lbHost(port, { version }, { locality: locality(zone) });
    h.localityWeight = weight;
    return h;
  };
  const hosts = [
    at(80, 'a', 10, 'v1'), at(81, 'a', 10, 'v1'), at(82, 'a', 10, 'v2'), at(83, 'a', 10, 'v2'),
    at(84, 'b', 20, 'v1'), at(85, 'b', 20, 'v1'),
    at(86, 'c', 30, 'v2'),
    at(87, 'd', 10, 'v1'), at(88, 'd', 10, 'v2'), at(89, 'd', 10, 'v2'),
  ];
  /** The v1 subset's localities (zones, with their ports) and weights at priority 0. */
  const v1 = (config: Partial<LbSubsetConfig>) => {
    const { prioritySets } = subsetLb(hosts, { subsetSelectors: [selector('version')], ...config });
    const set = prioritySets.find((s) => s.hostSetsPerPriority[0].hosts.some((h) => h.port === 80))!.hostSetsPerPriority[0];
    return {
      localities: set.hostsPerLocality.localities.map((l, i) => [l.zone, set.hostsPerLocality.hosts[i].map((h) => h.port)]),
      weights: set.localityWeights,
    };
  };
  // Every locality of the cluster stays in place, even one the subset leaves empty.
  assert.deepEqual(v1({}).localities, [['a', [80, 81]], ['b', [84, 85]], ['c', []], ['d', [87]]]);
  // Not locality aware: no locality weights, as Envoy gives the subset none.
  assert.deepEqual(v1({}).weights, [0, 0, 0, 0]);
  assert.deepEqual(v1({ localityWeightAware: true }).weights, [10, 20, 30, 10]);
  // Scaled by the share of each locality's hosts in the subset: 10*2/4, 20*2/2, 30*0/1, 10*1/3 rounded.
  assert.deepEqual(v1({ localityWeightAware: true, scaleLocalityWeight: true }).weights, [5, 20, 0, 3]);
});
