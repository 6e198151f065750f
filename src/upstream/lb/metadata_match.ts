// A route's metadata match criteria (Envoy's MetadataMatchCriteria): the `proxy.lb` fields a
// host's endpoint metadata must hold for the subset load balancer to pick it.

/** One field of the `proxy.lb` namespace and the value it must have (a JSON value, compared deeply). */
export interface MetadataMatchCriterion {
  readonly name: string;
  readonly value: unknown;
}

/** Sorted by name, one entry per name. */
export type MetadataMatchCriteria = readonly MetadataMatchCriterion[];
