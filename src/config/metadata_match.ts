// A route's metadata match criteria (Envoy's MetadataMatchCriteria): the `proxy.lb` fields a
// host's endpoint metadata must hold for the subset load balancer to pick it.

/** The metadata namespace of the criteria (Envoy's `envoy.lb`, as this build spells it). */
export const LB_METADATA_NAMESPACE = 'proxy.lb';

/** One field of the `proxy.lb` namespace and the value it must have (a JSON value, compared deeply). */
export interface MetadataMatchCriterion {
  readonly name: string;
  readonly value: unknown;
}

/** Sorted by name, one entry per name. */
export type MetadataMatchCriteria = readonly MetadataMatchCriterion[];

/**
 * The criteria of a `proxy.lb` Struct (its fields as JSON), merged over `parent` when there is
 * one: a field of `fields` replaces the parent's of the same name (Envoy's mergeMatchCriteria).
 */
export function metadataMatchCriteria(fields: Readonly<Record<string, unknown>>, parent: MetadataMatchCriteria | null = null): MetadataMatchCriteria {
  const byName = new Map<string, unknown>();
  if (parent !== null) for (const criterion of parent) byName.set(criterion.name, criterion.value);
  for (const [name, value] of Object.entries(fields)) byName.set(name, value);
  return [...byName.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, value]) => ({ name, value }));
}
