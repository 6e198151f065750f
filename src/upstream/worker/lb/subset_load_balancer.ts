// Envoy's subset load balancer (subset_lb.cc, 1.16): the cluster's hosts divided into subsets by
// their `proxy.lb` endpoint metadata, one per combination of values of each selector's keys; a
// request whose route carries metadata_match goes to the subset with exactly those keys and
// values, else to a fallback. Each subset (and fallback) runs the cluster's lb_policy over its
// own priority set, so every policy of the registry works inside subsets.

import type { LbSubsetConfig, LbSubsetSelector } from '../../../config/model';
import type { Host } from '../host';
import { type HostSet, type HostsPerLocality, PrioritySet } from '../priority_set';
import { type LoadBalancer, type LoadBalancerContext, withMetadataMatch } from './load_balancer';
import type { LoadBalancerParams } from './load_balancer_base';
import type { LoadBalancerFactory } from './load_balancer_registry';
import { LB_METADATA_NAMESPACE, type MetadataMatchCriteria } from '../../../config/metadata_match';
import { valueKey, valuesEqual } from '../../shared/protobuf_value';

/** A subset's identity: (key, value) pairs, keys sorted (Envoy's SubsetMetadata). */
type SubsetMetadata = readonly (readonly [name: string, value: unknown])[];

type SelectorFallbackPolicy = Exclude<LbSubsetSelector['fallbackPolicy'], 'NOT_DEFINED'>;

interface SelectorFallback {
  readonly policy: SelectorFallbackPolicy;
  /** For KEYS_SUBSET: the criteria names matching is retried with. */
  readonly keysSubset: ReadonlySet<string>;
}

/** Hosts and a balancer of the cluster's policy over them (Envoy's LbSubsetEntry and PrioritySubsetImpl). */
interface Subset {
  readonly prioritySet: PrioritySet;
  readonly lb: LoadBalancer;
  /** Has hosts (healthy or not); an inactive subset is kept but never selected. */
  active: boolean;
}

/** What a pick needs of a context's criteria, worked out once per criteria object. */
interface ResolvedCriteria {
  readonly subsetKey: string;
  /** The fallback of the selector whose keys are exactly the criteria's names; null defers to the top level. */
  readonly fallback: SelectorFallback | null;
  /** The criteria reduced to fallback.keysSubset; made on first use. */
  reduced: MetadataMatchCriteria | null;
}

export class SubsetLoadBalancer implements LoadBalancer {
  /** By subsetKey; subsets left without hosts stay, inactive, as in Envoy. */
  private readonly subsets = new Map<string, Subset>();
  /** Each selector's keys, deduplicated and sorted (an empty selector makes no subsets). */
  private readonly selectorKeys: readonly (readonly string[])[];
  /** By keySetKey of the selector's keys; selectors with NOT_DEFINED are absent. */
  private readonly selectorFallbacks = new Map<string, SelectorFallback>();
  private readonly defaultMetadata: SubsetMetadata;
  /** Every host: for ANY_ENDPOINT (top level or selector) and panic_mode_any. */
  private readonly anySubset: Subset | null;
  /** The hosts matching default_subset: for DEFAULT_SUBSET (top level or selector). */
  private readonly defaultSubset: Subset | null;
  /** The top-level fallback_policy's subset; null for NO_FALLBACK. */
  private readonly fallbackSubset: Subset | null;
  private readonly panicSubset: Subset | null;
  private readonly resolved = new WeakMap<MetadataMatchCriteria, ResolvedCriteria>();

  /** `inner` builds the balancer of each subset: the cluster's lb_policy. */
  constructor(
    private readonly config: LbSubsetConfig,
    private readonly inner: LoadBalancerFactory,
    private readonly params: LoadBalancerParams,
  ) {
    this.selectorKeys = config.subsetSelectors.map((selector) => [...new Set(selector.keys)].sort()).filter((keys) => keys.length > 0);
    for (const selector of config.subsetSelectors) {
      const id = keySetKey(selector.keys);
      // The first selector with a fallback of its own for a set of keys decides it.
      if (selector.fallbackPolicy === 'NOT_DEFINED' || this.selectorFallbacks.has(id)) continue;
      this.selectorFallbacks.set(id, { policy: selector.fallbackPolicy, keysSubset: new Set(selector.fallbackKeysSubset) });
    }
    this.defaultMetadata = Object.entries(config.defaultSubset);
    const policies = new Set<string>([config.fallbackPolicy, ...[...this.selectorFallbacks.values()].map((fallback) => fallback.policy)]);
    this.anySubset = policies.has('ANY_ENDPOINT') || config.panicModeAny ? this.newSubset() : null;
    this.defaultSubset = policies.has('DEFAULT_SUBSET') ? this.newSubset() : null;
    this.fallbackSubset = config.fallbackPolicy === 'ANY_ENDPOINT' ? this.anySubset : config.fallbackPolicy === 'DEFAULT_SUBSET' ? this.defaultSubset : null;
    this.panicSubset = config.panicModeAny ? this.anySubset : null;
    this.refresh();
  }

  chooseHost(context: LoadBalancerContext | null): Host | null {
    const criteria = context?.metadataMatch ?? null;
    if (context !== null && criteria !== null && criteria.length > 0) {
      const resolved = this.resolve(criteria);
      const subset = this.subsets.get(resolved.subsetKey);
      if (subset !== undefined && subset.active) {
        this.params.info.stats.counters.lb_subsets_selected.inc();
        // The subset's answer stands even when it is no host: a matching subset is never fallen back from.
        return subset.lb.chooseHost(context);
      }
      if (resolved.fallback !== null) return this.chooseSelectorFallback(resolved, resolved.fallback, context);
    }
    if (this.fallbackSubset === null) return null;
    const host = this.fallbackSubset.lb.chooseHost(context);
    if (host !== null) {
      this.params.info.stats.counters.lb_subsets_fallback.inc();
      return host;
    }
    const panicHost = this.panicSubset?.lb.chooseHost(context) ?? null;
    if (panicHost !== null) this.params.info.stats.counters.lb_subsets_fallback_panic.inc();
    return panicHost;
  }

  /**
   * Regroups the hosts after a membership, metadata or health change: every subset's hosts are
   * re-read, subsets are made for new combinations of values, and lb_subsets_active/created/
   * removed follow subsets gaining their first host or losing their last.
   */
  refresh(): void {
    const original = this.params.prioritySet.hostSetsPerPriority;
    const found = new Map<string, Host[][]>();
    original.forEach((set, priority) => {
      for (const host of set.hosts) {
        const fields = lbMetadata(host);
        if (fields === null) continue;
        for (const keys of this.selectorKeys) {
          for (const metadata of subsetMetadataOf(keys, fields, this.config.listAsAny)) {
            const key = subsetKey(metadata);
            let members = found.get(key);
            if (members === undefined) {
              members = original.map(() => []);
              found.set(key, members);
            }
            // A list holding a value twice names the same subset twice, one after the other.
            const list = members[priority];
            if (list[list.length - 1] !== host) list.push(host);
          }
        }
      }
    });
    for (const key of found.keys()) if (!this.subsets.has(key)) this.subsets.set(key, this.newSubset());
    const gauge = this.params.info.stats.gauges.lb_subsets_active;
    const counters = this.params.info.stats.counters;
    for (const [key, subset] of this.subsets) {
      const members = found.get(key);
      if (members === undefined && !subset.active) continue;
      this.updateSubset(subset, members ?? original.map(() => []));
      const active = members !== undefined;
      if (active === subset.active) continue;
      subset.active = active;
      if (active) {
        gauge.inc();
        counters.lb_subsets_created.inc();
      } else {
        gauge.dec();
        counters.lb_subsets_removed.inc();
      }
    }
    if (this.anySubset !== null) this.updateSubset(this.anySubset, original.map((set) => set.hosts));
    if (this.defaultSubset !== null) {
      this.updateSubset(this.defaultSubset, original.map((set) => set.hosts.filter((host) => hostMatches(this.defaultMetadata, host, this.config.listAsAny))));
    }
  }

  /** A selector's own fallback (Envoy's chooseHostForSelectorFallbackPolicy): no stats, no panic mode. */
  private chooseSelectorFallback(resolved: ResolvedCriteria, fallback: SelectorFallback, context: LoadBalancerContext): Host | null {
    switch (fallback.policy) {
      case 'NO_FALLBACK':
        return null;
      case 'ANY_ENDPOINT':
        return this.anySubset!.lb.chooseHost(context);
      case 'DEFAULT_SUBSET':
        return this.defaultSubset!.lb.chooseHost(context);
      case 'KEYS_SUBSET': {
        const reduced = (resolved.reduced ??= context.metadataMatch!.filter((criterion) => fallback.keysSubset.has(criterion.name)));
        // The whole choice again, with fewer keys: their subset, their selector's fallback, or the top level's.
        return this.chooseHost(withMetadataMatch(context, reduced));
      }
    }
  }

  private resolve(criteria: MetadataMatchCriteria): ResolvedCriteria {
    let resolved = this.resolved.get(criteria);
    if (resolved === undefined) {
      const metadata = criteria.map((criterion) => [criterion.name, criterion.value] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1));
      const fallback = this.selectorFallbacks.get(keySetKey(criteria.map((criterion) => criterion.name))) ?? null;
      resolved = { subsetKey: subsetKey(metadata), fallback, reduced: null };
      this.resolved.set(criteria, resolved);
    }
    return resolved;
  }

  private newSubset(): Subset {
    const prioritySet = new PrioritySet();
    return { prioritySet, lb: this.inner.create({ ...this.params, prioritySet }), active: false };
  }

  /** `members`: per priority of the cluster, the subset's hosts in the cluster's order. */
  private updateSubset(subset: Subset, members: readonly (readonly Host[])[]): void {
    const original = this.params.prioritySet.hostSetsPerPriority;
    subset.prioritySet.updateSets(original.map((set, priority) => set.subset(members[priority], (kept) => this.localityWeights(set, kept))));
    subset.lb.refresh();
  }

  /**
   * A subset's locality weights (Envoy's determineLocalityWeights): none (all 0) unless
   * locality_weight_aware; the cluster's with it; with scale_locality_weight too, each scaled by
   * the share of the locality's hosts the subset holds, rounded as Envoy's float arithmetic does.
   */
  private localityWeights(set: HostSet, kept: HostsPerLocality): readonly number[] {
    if (!this.config.localityWeightAware) return kept.localities.map(() => 0);
    if (!this.config.scaleLocalityWeight) return set.localityWeights;
    return set.localityWeights.map((weight, i) => {
      const total = set.hostsPerLocality.hosts[i].length;
      return total === 0 ? 0 : Math.round(Math.fround(Math.fround(weight * kept.hosts[i].length) / total));
    });
  }
}

/** The host's `proxy.lb` Struct; null without one. */
function lbMetadata(host: Host): Readonly<Record<string, unknown>> | null {
  const fields = host.metadata[LB_METADATA_NAMESPACE];
  return fields !== null && typeof fields === 'object' && !Array.isArray(fields) ? (fields as Record<string, unknown>) : null;
}

/**
 * The subsets a host with `fields` belongs to for a selector with `keys`: none when it lacks a
 * key, else one; with list_as_any, one per combination of the elements of its list values.
 */
function subsetMetadataOf(keys: readonly string[], fields: Readonly<Record<string, unknown>>, listAsAny: boolean): SubsetMetadata[] {
  let combinations: SubsetMetadata[] = [[]];
  for (const key of keys) {
    if (!Object.hasOwn(fields, key)) return [];
    const value = fields[key];
    const values = listAsAny && Array.isArray(value) ? value : [value];
    combinations = combinations.flatMap((metadata) => values.map((v) => [...metadata, [key, v] as const]));
  }
  return combinations;
}

/** Envoy's metadataLabelMatch: the host has every key with an equal value (or, with list_as_any, a list holding one). */
function hostMatches(metadata: SubsetMetadata, host: Host, listAsAny: boolean): boolean {
  const fields = lbMetadata(host);
  if (fields === null) return metadata.length === 0;
  return metadata.every(([name, value]) => {
    if (!Object.hasOwn(fields, name)) return false;
    const actual = fields[name];
    return listAsAny && Array.isArray(actual) ? actual.some((element) => valuesEqual(element, value)) : valuesEqual(actual, value);
  });
}

/** Metadata with sorted keys -> a string equal for equal metadata (values by valueKey). */
function subsetKey(metadata: SubsetMetadata): string {
  return metadata.map(([name, value]) => `${JSON.stringify(name)}=${valueKey(value)}`).join(',');
}

function keySetKey(keys: readonly string[]): string {
  return JSON.stringify([...new Set(keys)].sort());
}
