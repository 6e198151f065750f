// proxy.retry_host_predicates.previous_hosts: a retry avoids the hosts already tried (the
// router's retry_state.ts acts on the route's avoidPreviousHosts). PreviousHostsPredicate has no
// fields.

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES, PREVIOUS_HOSTS } from '../../config/names';
import type { DataPlaneFactories } from '../data_plane_factories';

export const PREVIOUS_HOSTS_PREDICATE: ExtensionDescriptor<'proxy.retry_host_predicates', DataPlaneFactories['proxy.retry_host_predicates']> = {
  category: 'proxy.retry_host_predicates',
  name: PREVIOUS_HOSTS,
  configType: CONFIG_TYPES.previousHosts,
  shape: { fields: {} },
  model: () => ({ name: PREVIOUS_HOSTS }),
  factory: null,
};
