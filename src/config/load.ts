// Loading the bootstrap: --config-path and/or --config-yaml, each -> JSON within the input limits
// -> (v2 -> v3 upgrade) -> decoded against the v3 protos; then the two merged -> extension names
// in our spelling -> the protos' validation rules -> validated -> the model -> what this build
// runs (the capability check). Every extension is found in, and checked and modelled by, the
// registry the caller hands in.

import { checkCapabilities } from './capabilities';
import type { ConfigExtensions } from './extension';
import { ProtoFile, readProtoFile } from './proto_file';
import { parseYaml } from './config_text';
import { ConfigError, FieldError, inConfigFile } from './errors';
import { canonicalizeExtensionNames } from './extension_sites';
import { checkInputLimits, checkInputSize } from './input_limits';
import { JsonObject, JsonValue } from './json';
import { mergeMessage } from './merge';
import { Bootstrap } from './model';
import { buildBootstrapModel } from './model_builder';
import { decodeProtoJson, DecodedMessage, DecodeOptions } from './proto_json';
import { protoSchema, ProtoSchema } from './schema';
import { UnsupportedV2FieldError, upgradeV2 } from './v2_upgrade';
import { validateBootstrap } from './validation/bootstrap';
import { checkDisabledExtensions } from './validation/disabled_extensions';
import { checkPlatformDns } from './validation/platform_dns';
import { checkProtoRules } from './validation/proto_rules';
import { startupRuntime } from '../runtime/startup_runtime';

export interface LoadOptions {
  /** The extensions this build has (src/extensions/builtin_extensions.ts). */
  readonly extensions: ConfigExtensions;
  readonly configPath?: string;
  /** YAML or JSON, merged over the file when both are given. */
  readonly configYaml?: string;
  /** --bootstrap-version: 2 or 3; unset (or null): try the input as v2 (upgraded), then as v3. */
  readonly bootstrapVersion?: number | null;
  /** Skip unknown fields (and list them) instead of rejecting the configuration. */
  readonly allowUnknownStaticFields: boolean;
  /** --disable-extensions, resolved (keys of ExtensionRegistry.resolveDisabled). */
  readonly disabledExtensions?: ReadonlySet<string>;
  /** --service-cluster ('' or unset: the bootstrap's node.cluster), for the start-up runtime. */
  readonly serviceCluster?: string;
}

export interface LoadedBootstrap {
  readonly bootstrap: Bootstrap;
  /** Deprecation warnings, one line each, to log once at start-up. */
  readonly warnings: readonly string[];
  /** Paths of the fields skipped as unknown (only with allowUnknownStaticFields). */
  readonly unknownFields: readonly string[];
}

export const NO_CONFIG_MESSAGE =
  'At least one of --config-path or --config-yaml or Options::configProto() should be non-empty';

const CONFIG_YAML_SOURCE = '--config-yaml';

/** @throws ConfigError */
export function loadBootstrap(options: LoadOptions): LoadedBootstrap {
  const { configPath, configYaml, extensions } = options;
  if (!configPath && !configYaml) throw new ConfigError('', '', NO_CONFIG_MESSAGE);
  const schema = protoSchema();
  const decodeOptions = { allowUnknownFields: options.allowUnknownStaticFields };

  const decodeInput = (source: string, read: () => ProtoFile): DecodedInput =>
    inConfigFile(source, () => {
      const input = read();
      const { decoded, warnings } = decodeBootstrap(schema, extensions, input.json, options.bootstrapVersion, decodeOptions);
      return { json: decoded.json, warnings, unknownFields: [...input.unknownFields, ...decoded.unknownFields] };
    });
  // Each decoded apart (a v2 one upgraded), then --config-yaml merged into the file, as Envoy's
  // bootstrap.MergeFrom(bootstrap_override).
  const inputs = [
    ...(configPath ? [decodeInput(configPath, () => readProtoFile(configPath, schema.bootstrap, schema, decodeOptions))] : []),
    ...(configYaml ? [decodeInput(CONFIG_YAML_SOURCE, () => ({ json: parseOverride(configYaml), unknownFields: [] }))] : []),
  ];
  const json = inputs.map((input) => input.json).reduce((base, overlay) => mergeMessage(schema.bootstrap, base, overlay));

  return inConfigFile(configPath || CONFIG_YAML_SOURCE, () => {
    const model = checkedBootstrapModel(json, extensions, options.disabledExtensions ?? new Set(), options.serviceCluster ?? '');
    return {
      bootstrap: model,
      warnings: [...inputs.flatMap((input) => input.warnings), ...injectedTlsInspectors(model)],
      unknownFields: inputs.flatMap((input) => input.unknownFields),
    };
  });
}

/**
 * The stages after decoding: a decoded v3 bootstrap (its extension names canonicalized in
 * place) checked and modelled. LDS runs its listeners through here too, each in a bootstrap of its own.
 * @param serviceCluster --service-cluster ('': the bootstrap's node.cluster)
 * @throws FieldError, or FieldErrors for several
 */
/** @param dynamicClusters clusters the cluster manager has beyond the bootstrap's, that routes may name (an LDS listener's CDS clusters) */
export function checkedBootstrapModel(
  json: JsonObject,
  extensions: ConfigExtensions,
  disabledExtensions: ReadonlySet<string>,
  serviceCluster: string,
  dynamicClusters?: ReadonlySet<string>,
): Bootstrap {
  const bootstrap = canonicalizeExtensionNames(json, extensions);
  checkDisabledExtensions(bootstrap, disabledExtensions, extensions);
  // The protos' own rules first, as Envoy checks them on loading: the validators after them
  // may take what the protos guarantee (a cluster's name, a positive connect_timeout).
  checkProtoRules(protoSchema(), bootstrap);
  validateBootstrap(bootstrap, extensions, dynamicClusters);
  const model = buildBootstrapModel(bootstrap, extensions);
  // The start-up runtime (static and disk layers) decides some checks, in validate mode too.
  checkPlatformDns(bootstrap, startupRuntime(model.runtimeLayers, serviceCluster || model.node.cluster));
  // Last, so that a configuration that is also invalid is reported for that first.
  checkCapabilities(bootstrap, extensions);
  return model;
}

/** Envoy 1.16 warns when it adds the TLS inspector a listener's filter chain matches need. */
function injectedTlsInspectors(model: Bootstrap): string[] {
  return model.listeners.flatMap((listener, i) =>
    listener.listenerFilters.some((filter) => filter.injected)
      ? [`static_resources.listeners[${i}].listener_filters: filter chain match rules require the TLS inspector listener filter, but it isn't configured; injecting it`]
      : [],
  );
}

/** --config-yaml, checked like a file before any stage walks it (readProtoFile does). */
function parseOverride(configYaml: string): JsonValue {
  checkInputSize(Buffer.byteLength(configYaml), 'text');
  const json = parseYaml(configYaml);
  checkInputLimits(json);
  return json;
}

/** One input (the file, --config-yaml) as canonical v3 JSON. */
interface DecodedInput {
  readonly json: JsonObject;
  readonly warnings: readonly string[];
  readonly unknownFields: readonly string[];
}

interface VersionedDecode {
  readonly decoded: DecodedMessage;
  readonly warnings: readonly string[];
}

/** The spec's version rule: unset tries the previous version (upgraded) first, then the latest. */
function decodeBootstrap(
  schema: ProtoSchema,
  extensions: ConfigExtensions,
  input: JsonValue,
  version: number | null | undefined,
  decodeOptions: DecodeOptions,
): VersionedDecode {
  const asV3 = (json: JsonValue, options = decodeOptions): DecodedMessage => decodeProtoJson(schema, schema.bootstrap, json, options);
  const asV2 = (): VersionedDecode => {
    const upgraded = upgradeV2(input, extensions, schema);
    const decoded = asV3(upgraded.json, { ...decodeOptions, messageRewrites: upgraded.messageRewrites });
    return { decoded, warnings: upgraded.warnings };
  };
  switch (version) {
    case 2:
      return asV2();
    case 3:
      return { decoded: asV3(input), warnings: [] };
    case null:
    case undefined:
      try {
        return asV2();
      } catch (error) {
        // The v3 attempt's error is the one reported when both fail, unless the v2 one is final.
        if (!(error instanceof FieldError) || error instanceof UnsupportedV2FieldError) throw error;
        return { decoded: asV3(input), warnings: [] };
      }
    default:
      throw new FieldError('', `Unknown bootstrap version ${version}.`);
  }
}
