// The cluster discovery types (`type`: STATIC, STRICT_DNS, ...), registered as Envoy registers
// them (`proxy.cluster.static`, ...): they take no typed_config; their factories are the
// supervisor's discovery (src/upstream/supervisor/).

import type { ExtensionDescriptor } from '../../config/extension';
import { clusterExtensionName } from '../../config/extension_registry';
import type { ClusterType } from '../../upstream/supervisor/cluster_discovery';
import { LOGICAL_DNS_CLUSTER, STRICT_DNS_CLUSTER } from '../../upstream/supervisor/dns_cluster';
import { EDS_CLUSTER } from '../../upstream/supervisor/eds_cluster';
import { ORIGINAL_DST_CLUSTER } from '../../upstream/supervisor/original_dst_cluster';
import { STATIC_CLUSTER } from '../../upstream/supervisor/static_cluster';

function discoveryType(type: ClusterType): ExtensionDescriptor<'proxy.clusters', ClusterType> {
  const name = clusterExtensionName(type.name);
  return { category: 'proxy.clusters', name, configType: null, shape: { fields: {} }, model: () => ({ name, typedConfig: {} }), factory: type };
}

export const STATIC = discoveryType(STATIC_CLUSTER);
export const STRICT_DNS = discoveryType(STRICT_DNS_CLUSTER);
export const LOGICAL_DNS = discoveryType(LOGICAL_DNS_CLUSTER);
export const EDS = discoveryType(EDS_CLUSTER);
export const ORIGINAL_DST = discoveryType(ORIGINAL_DST_CLUSTER);
