// proxy.internal_redirect_predicates.safe_cross_scheme: an internal redirect may go from https to
// http but not from http to https (the router's internal_redirect.ts acts on it).
// SafeCrossSchemeConfig has no fields.

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES, SAFE_CROSS_SCHEME } from '../../config/names';
import type { DataPlaneFactories } from '../data_plane_factories';

export const SAFE_CROSS_SCHEME_PREDICATE: ExtensionDescriptor<'proxy.internal_redirect_predicates', DataPlaneFactories['proxy.internal_redirect_predicates']> = {
  category: 'proxy.internal_redirect_predicates',
  name: SAFE_CROSS_SCHEME,
  configType: CONFIG_TYPES.safeCrossScheme,
  shape: { fields: {} },
  model: () => ({ name: SAFE_CROSS_SCHEME }),
  factory: null,
};
