// The tracing settings of the connection manager and of its routes, as Envoy 1.16 reads them: the
// manager's samplings are Percents it turns into FractionalPercents (random_sampling out of
// 10,000, truncated), a route's are FractionalPercents; every sampling defaults to 100%.

import type { ConfigExtensions } from '../../../config/extension';
import { boolField, type JsonObject, messageField, messageList, numberField, stringField } from '../../../config/json';
import type { CustomTagConfig, DecoratorConfig, FractionalPercent, HttpTracingConfig, PercentDenominator, RouteTracingConfig } from '../../../config/model';
import { fractionalPercent } from '../../../config/model_builder';

/** Envoy's DefaultMaxPathTagLength. */
const DEFAULT_MAX_PATH_TAG_LENGTH = 256;
const ALL: FractionalPercent = { numerator: 100, denominator: 'HUNDRED' };

/** The connection manager's `tracing`; null when unset. */
export function httpTracing(config: JsonObject, extensions: ConfigExtensions): HttpTracingConfig | null {
  const tracing = messageField(config, 'tracing');
  if (tracing === undefined) return null;
  const provider = messageField(tracing, 'provider');
  return {
    clientSampling: percentOf(tracing, 'client_sampling', 'HUNDRED'),
    randomSampling: percentOf(tracing, 'random_sampling', 'TEN_THOUSAND'),
    overallSampling: percentOf(tracing, 'overall_sampling', 'HUNDRED'),
    verbose: boolField(tracing, 'verbose'),
    maxPathTagLength: numberField(tracing, 'max_path_tag_length', DEFAULT_MAX_PATH_TAG_LENGTH),
    customTags: customTagsOf(tracing),
    provider: provider === undefined ? null : extensions.model('proxy.tracers', provider),
  };
}

/**
 * A type.v3.Percent as Envoy 1.16 converts it: out of 100, its whole part; out of 10,000,
 * truncated after scaling (convertPercent). All when unset.
 */
function percentOf(tracing: JsonObject, field: string, denominator: PercentDenominator): FractionalPercent {
  const percent = messageField(tracing, field);
  const scale = denominator === 'HUNDRED' ? 100 : 10_000;
  if (percent === undefined) return { numerator: scale, denominator };
  const value = numberField(percent, 'value');
  return { numerator: Math.trunc(denominator === 'HUNDRED' ? value : scale * (value / 100)), denominator };
}

/** A route's `tracing`; nothing when unset. */
export function routeTracing(route: JsonObject): { tracing?: RouteTracingConfig } {
  const tracing = messageField(route, 'tracing');
  if (tracing === undefined) return {};
  const sampling = (field: string, all: FractionalPercent): FractionalPercent => {
    const percent = messageField(tracing, field);
    return percent === undefined ? all : fractionalPercent(percent);
  };
  return {
    tracing: {
      clientSampling: sampling('client_sampling', ALL),
      randomSampling: sampling('random_sampling', { numerator: 10_000, denominator: 'TEN_THOUSAND' }),
      overallSampling: sampling('overall_sampling', ALL),
      customTags: customTagsOf(tracing),
    },
  };
}

/** A route's `decorator`; nothing when unset. */
export function routeDecorator(route: JsonObject): { decorator?: DecoratorConfig } {
  const decorator = messageField(route, 'decorator');
  if (decorator === undefined) return {};
  return { decorator: { operation: stringField(decorator, 'operation'), propagate: boolField(decorator, 'propagate', true) } };
}

/** Literal, environment and request_header tags (the capability check refuses the metadata kind). */
function customTagsOf(tracing: JsonObject): CustomTagConfig[] {
  return messageList(tracing, 'custom_tags').map((config): CustomTagConfig => {
    const tag = stringField(config, 'tag');
    const literal = messageField(config, 'literal');
    if (literal !== undefined) return { tag, kind: 'literal', value: stringField(literal, 'value') };
    const environment = messageField(config, 'environment');
    if (environment !== undefined) return { tag, kind: 'environment', name: stringField(environment, 'name'), defaultValue: stringField(environment, 'default_value') };
    const header = messageField(config, 'request_header') ?? {};
    return { tag, kind: 'request_header', name: stringField(header, 'name').toLowerCase(), defaultValue: stringField(header, 'default_value') };
  });
}
