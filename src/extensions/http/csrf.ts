// proxy.filters.http.csrf (src/filters/http/csrf.ts): its CsrfPolicy, as typed_config and as a
// typed_per_filter_config entry alike (Envoy 1.16's filter takes the same message for both).

import { RUNTIME_FRACTION, STRING_MATCHER } from '../../config/common_shapes';
import type { ExtensionDescriptor } from '../../config/extension';
import { JsonObject, messageField, messageList } from '../../config/json';
import type { CsrfPolicyConfig } from '../../config/model';
import { runtimeFraction } from '../../config/model_builder';
import { CONFIG_TYPES, CSRF } from '../../config/names';
import { list, Shape } from '../../config/shape';
import { stringMatch, validateStringMatchers } from '../../config/string_match_model';
import type { DataPlaneFactories } from '../data_plane_factories';

const CSRF_POLICY: Shape = { fields: { filter_enabled: RUNTIME_FRACTION, shadow_enabled: RUNTIME_FRACTION, additional_origins: list(STRING_MATCHER) } };

export const CSRF_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: CSRF,
  aliases: ['envoy.csrf'],
  configType: CONFIG_TYPES.csrf,
  shape: CSRF_POLICY,
  validate: validateCsrfPolicy,
  model: (config) => ({ name: CSRF, csrf: csrfPolicy(config) }),
  factory: (config, context) => {
    if (config.csrf === undefined) return null;
    const { CsrfFilterFactory } = require('../../filters/http/csrf') as typeof import('../../filters/http/csrf');
    return new CsrfFilterFactory(config.csrf, context);
  },
  perRoute: { configType: CONFIG_TYPES.csrf, shape: CSRF_POLICY, validate: validateCsrfPolicy, model: csrfPolicy },
};

/** The protos require filter_enabled; its additional origins' regexes must compile. */
function validateCsrfPolicy(config: JsonObject, path: string): void {
  validateStringMatchers(config, 'additional_origins', path);
}

function csrfPolicy(config: JsonObject): CsrfPolicyConfig {
  const shadowEnabled = messageField(config, 'shadow_enabled');
  return {
    filterEnabled: runtimeFraction(messageField(config, 'filter_enabled') ?? {}),
    ...(shadowEnabled !== undefined ? { shadowEnabled: runtimeFraction(shadowEnabled) } : {}),
    additionalOrigins: messageList(config, 'additional_origins').map(stringMatch),
  };
}
