// The registry of cluster types this build runs. The capability check, the extension registry
// (GET /server_info) and the cluster manager all read it: adding a type touches this list.

import type { ClusterType } from './cluster_discovery';
import { STATIC_CLUSTER } from './static_cluster';

export const CLUSTER_TYPES: ReadonlyMap<string, ClusterType> = new Map([STATIC_CLUSTER].map((t) => [t.name, t]));
