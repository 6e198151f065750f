// Clusters: identity, discovery type and members, load balancer options, protocol options, DNS
// settings and endpoints, with Envoy's load-time messages where Envoy has one. The one-of rules
// of the spec (type / cluster_type, the lb configs, zone aware / locality weighted) are enforced
// by decoding, which rejects two members of a proto oneof.

import { configSourceContext, validateConfigSource } from './config_sources';
import { FieldError, FieldErrorCollector } from '../errors';
import { childPath, indexPath } from '../field_path';
import { boolField, durationMs, enumField, JsonObject, messageField, messageList, numberField, stringField, stringList } from '../json';
import type { ConfigExtensions } from '../extension';
import { typeNameOfUrl } from '../names';
import { requireNonNegativeDuration } from './durations';
import { validateHealthChecks } from './health_checks';
import { HostRule, validateSocketAddress } from './socket_address';
import { validateUpstreamFilters } from './upstream_filters';
import { validateUpstreamTransportSockets } from './upstream_transport_sockets';

/** Load balancer option blocks and the lb_policy each belongs to. */
const LB_CONFIG_POLICIES: ReadonlyMap<string, string> = new Map([
  ['ring_hash_lb_config', 'RING_HASH'],
  ['least_request_lb_config', 'LEAST_REQUEST'],
  ['maglev_lb_config', 'MAGLEV'],
  ['round_robin_lb_config', 'ROUND_ROBIN'],
  ['original_dst_lb_config', 'CLUSTER_PROVIDED'],
]);

/** Newer than the API we implement; the model has no place for them. */
const UNSUPPORTED_LB_POLICIES = new Set(['LOAD_BALANCING_POLICY_CONFIG']);

// The proto rules bound dns_refresh_rate (at least 1 ms: the spec's rule, gen-protos.js); the ring
// sizes' defaults are Envoy's.
const DEFAULT_MIN_RING_SIZE = 1024;
const DEFAULT_MAX_RING_SIZE = 8 * 1024 * 1024;

export function validateClusters(bootstrap: JsonObject, extensions: ConfigExtensions, errors: FieldErrorCollector): void {
  const names = new Set<string>();
  const resources = messageField(bootstrap, 'static_resources') ?? {};
  const sources = configSourceContext(bootstrap);
  messageList(resources, 'clusters').forEach((cluster, i) =>
    errors.run(() => {
      const path = indexPath('static_resources.clusters', i);
      // The protos require a name (proto_rules.ts); here it must also be unique.
      const name = stringField(cluster, 'name');
      if (names.has(name)) throw new FieldError(childPath(path, 'name'), `cluster manager: duplicate cluster '${name}'`);
      names.add(name);
      validateCluster(cluster, path, extensions);
      const edsConfig = messageField(messageField(cluster, 'eds_cluster_config') ?? {}, 'eds_config');
      if (edsConfig !== undefined) validateConfigSource(edsConfig, childPath(childPath(path, 'eds_cluster_config'), 'eds_config'), sources);
    }),
  );
}

export function validateCluster(cluster: JsonObject, path: string, extensions: ConfigExtensions): void {
  const customType = messageField(cluster, 'cluster_type');
  if (customType !== undefined) validateCustomType(cluster, customType, path, extensions);
  const type = enumField(cluster, 'type', 'STATIC');
  if (cluster['eds_cluster_config'] !== undefined && (customType !== undefined || type !== 'EDS')) {
    throw new FieldError(childPath(path, 'eds_cluster_config'), 'eds_cluster_config set in a non-EDS cluster');
  }
  const loadAssignment = messageField(cluster, 'load_assignment');
  if (customType === undefined) validateMembers(type, loadAssignment, path);
  else if (loadAssignment !== undefined) {
    // The custom types of this build (aggregate) pick other clusters' hosts: Envoy ignores these.
    throw new FieldError(childPath(path, 'load_assignment'), `a ${extensions.canonicalName(stringField(customType, 'name'))} cluster has no hosts of its own: load_assignment (or hosts) would be ignored`);
  }
  if (customType === undefined && type === 'EDS' && cluster['eds_cluster_config'] === undefined) {
    throw new FieldError(childPath(path, 'eds_cluster_config'), 'cannot create an EDS cluster without an EDS config');
  }
  validateLbPolicy(cluster, path);
  validateRingSize(cluster, path);
  validateMaglevTableSize(cluster, path);
  validateHostnameHashing(cluster, type, path);
  validateSubsetConfig(cluster, path);
  validateProtocolOptions(cluster, path);
  validateDnsRefreshRates(cluster, path);
  // A cluster's extensions route nowhere and subscribe to nothing: no names to check against.
  const context = { clusters: new Set<string>(), plaintextClusters: new Set<string>(), extensions, configSources: { primaryClusters: new Map(), hasAdsConfig: false } };
  validateUpstreamFilters(cluster, path, context);
  validateUpstreamTransportSockets(cluster, path, context);
  validateHealthChecks(cluster, path, context);
  messageList(cluster, 'dns_resolvers').forEach((resolver, r) =>
    validateSocketAddress(resolver, indexPath(childPath(path, 'dns_resolvers'), r), 'ip'),
  );
  if (loadAssignment !== undefined) {
    const hostRule: HostRule = type === 'STRICT_DNS' || type === 'LOGICAL_DNS' ? 'ip_or_hostname' : 'ip';
    const assignmentPath = childPath(path, 'load_assignment');
    validateLoadAssignment(loadAssignment, assignmentPath, hostRule);
    // Only EDS assignments go stale (Envoy's EDS cluster times them out); elsewhere it is ignored.
    if (durationMs(messageField(loadAssignment, 'policy') ?? {}, 'endpoint_stale_after') !== undefined) {
      throw new FieldError(
        childPath(childPath(assignmentPath, 'policy'), 'endpoint_stale_after'),
        `endpoint_stale_after applies to EDS assignments only: a ${type} cluster's load_assignment never goes stale (it would be ignored)`,
      );
    }
  }
}

/**
 * cluster_type names a registered custom type (Envoy 1.16's others, dynamic_forward_proxy and
 * redis, are not in this build) and carries its typed_config. Every custom type of this build
 * provides its balancer, which Envoy uses only with lb_policy CLUSTER_PROVIDED.
 */
function validateCustomType(cluster: JsonObject, customType: JsonObject, clusterPath: string, extensions: ConfigExtensions): void {
  const path = childPath(clusterPath, 'cluster_type');
  const typeName = stringField(customType, 'name');
  const types = extensions.of('proxy.clusters').filter((t) => t.configType !== null);
  const type = types.find((t) => t.name === extensions.canonicalName(typeName));
  if (type === undefined) {
    const known = types.map((t) => t.name).join(', ');
    throw new FieldError(childPath(path, 'name'), `Didn't find a registered cluster factory implementation for name: '${typeName}' (known: ${known})`);
  }
  const typedConfig = messageField(customType, 'typed_config');
  if (typedConfig === undefined) throw new FieldError(childPath(path, 'typed_config'), `missing: ${type.name} takes a ${type.configType}`);
  const url = stringField(typedConfig, '@type');
  if (typeNameOfUrl(url) !== type.configType) {
    throw new FieldError(childPath(childPath(path, 'typed_config'), '@type'), `${type.name} takes a ${type.configType}, not ${typeNameOfUrl(url)}`);
  }
  const lbPolicy = enumField(cluster, 'lb_policy', 'ROUND_ROBIN');
  if (lbPolicy !== 'CLUSTER_PROVIDED') {
    throw new FieldError(
      childPath(clusterPath, 'lb_policy'),
      `cluster manager: cluster provided LB not specified but cluster '${stringField(cluster, 'name')}' provided one. Check cluster documentation.`,
    );
  }
}

/** What each discovery type needs of load_assignment (or the v2 hosts it was upgraded from). */
function validateMembers(type: string, loadAssignment: JsonObject | undefined, path: string): void {
  const loadAssignmentPath = childPath(path, 'load_assignment');
  if (type === 'STATIC' && loadAssignment === undefined) {
    throw new FieldError(loadAssignmentPath, 'a STATIC cluster needs a load_assignment (or hosts)');
  }
  if (type === 'EDS' && loadAssignment !== undefined) {
    throw new FieldError(loadAssignmentPath, 'an EDS cluster takes its endpoints from EDS: load_assignment (or hosts) would be ignored');
  }
  if (type === 'ORIGINAL_DST' && loadAssignment !== undefined) {
    throw new FieldError(loadAssignmentPath, 'ORIGINAL_DST clusters must have no load assignment or hosts configured');
  }
  if (type === 'LOGICAL_DNS') {
    const localities = loadAssignment === undefined ? [] : messageList(loadAssignment, 'endpoints');
    if (localities.length !== 1 || messageList(localities[0]!, 'lb_endpoints').length !== 1) {
      throw new FieldError(loadAssignmentPath, 'LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint');
    }
  }
}

/** Envoy's ring hash load balancer refuses a minimum above the maximum, each with its default. */
function validateRingSize(cluster: JsonObject, path: string): void {
  const ringHash = messageField(cluster, 'ring_hash_lb_config');
  if (ringHash === undefined) return;
  const minimum = numberField(ringHash, 'minimum_ring_size', DEFAULT_MIN_RING_SIZE);
  const maximum = numberField(ringHash, 'maximum_ring_size', DEFAULT_MAX_RING_SIZE);
  if (minimum > maximum) {
    throw new FieldError(
      childPath(childPath(path, 'ring_hash_lb_config'), 'minimum_ring_size'),
      `ring hash: minimum_ring_size (${minimum}) > maximum_ring_size (${maximum})`,
    );
  }
}

/** Envoy's Maglev load balancer takes prime table sizes only. */
function validateMaglevTableSize(cluster: JsonObject, path: string): void {
  const maglev = messageField(cluster, 'maglev_lb_config');
  if (maglev === undefined || maglev['table_size'] === undefined) return;
  if (!isPrime(numberField(maglev, 'table_size'))) {
    throw new FieldError(childPath(childPath(path, 'maglev_lb_config'), 'table_size'), 'The table size of maglev must be prime number');
  }
}

function isPrime(n: number): boolean {
  if (n < 2) return false;
  for (let d = 2; d * d <= n; d++) if (n % d === 0) return false;
  return true;
}

/**
 * use_hostname_for_hashing hashes a host by its hostname, which only STRICT_DNS clusters give
 * each host (the name it resolved from); Envoy documents it for those only. Every address of a
 * name then shares that name's points, as in Envoy.
 */
function validateHostnameHashing(cluster: JsonObject, type: string, path: string): void {
  const consistent = messageField(messageField(cluster, 'common_lb_config') ?? {}, 'consistent_hashing_lb_config');
  if (consistent === undefined || !boolField(consistent, 'use_hostname_for_hashing') || type === 'STRICT_DNS') return;
  throw new FieldError(
    childPath(childPath(childPath(path, 'common_lb_config'), 'consistent_hashing_lb_config'), 'use_hostname_for_hashing'),
    `use_hostname_for_hashing is only valid for STRICT_DNS clusters, but type is ${type}`,
  );
}

/**
 * Envoy's: with the configured protocol, HTTP/1 and HTTP/2 options together leave it undecided.
 * The durations of common_http_protocol_options the pools and the router time are not negative.
 */
function validateProtocolOptions(cluster: JsonObject, path: string): void {
  const common = messageField(cluster, 'common_http_protocol_options');
  if (common !== undefined) {
    const commonPath = childPath(path, 'common_http_protocol_options');
    for (const key of ['idle_timeout', 'max_connection_duration', 'max_stream_duration']) requireNonNegativeDuration(common, key, commonPath);
  }
  if (enumField(cluster, 'protocol_selection', 'USE_CONFIGURED_PROTOCOL') !== 'USE_CONFIGURED_PROTOCOL') return;
  if (cluster['http_protocol_options'] !== undefined && cluster['http2_protocol_options'] !== undefined) {
    throw new FieldError(
      childPath(path, 'http2_protocol_options'),
      "cluster: Both HTTP1 and HTTP2 options may only be configured with non-default 'protocol_selection' values",
    );
  }
}

function validateLbPolicy(cluster: JsonObject, path: string): void {
  const lbPolicy = enumField(cluster, 'lb_policy', 'ROUND_ROBIN');
  if (UNSUPPORTED_LB_POLICIES.has(lbPolicy)) {
    throw new FieldError(childPath(path, 'lb_policy'), `${lbPolicy} is not supported`);
  }
  // Of the discovery types, only ORIGINAL_DST brings its own balancer; a custom cluster_type
  // is judged by whether it has one when its cluster is built (cluster.ts). v2's ORIGINAL_DST_LB
  // arrives as CLUSTER_PROVIDED (v2_upgrade.ts), which Envoy treats alike.
  const type = enumField(cluster, 'type', 'STATIC');
  if (cluster['cluster_type'] === undefined && type === 'ORIGINAL_DST' && lbPolicy !== 'CLUSTER_PROVIDED') {
    throw new FieldError(
      childPath(path, 'lb_policy'),
      `cluster: LB policy ${lbPolicy} is not valid for Cluster type ${type}. Only 'CLUSTER_PROVIDED' or 'ORIGINAL_DST_LB' is allowed with cluster type 'ORIGINAL_DST'`,
    );
  }
  if (cluster['cluster_type'] === undefined && type !== 'ORIGINAL_DST' && lbPolicy === 'CLUSTER_PROVIDED') {
    throw new FieldError(
      childPath(path, 'lb_policy'),
      `cluster manager: cluster provided LB specified but cluster '${stringField(cluster, 'name')}' did not provide one. Check cluster documentation.`,
    );
  }
  for (const [field, policy] of LB_CONFIG_POLICIES) {
    if (cluster[field] !== undefined && lbPolicy !== policy) {
      throw new FieldError(childPath(path, field), `requires lb_policy ${policy}, but lb_policy is ${lbPolicy}`);
    }
  }
}

/** Envoy's subset load balancer rules (ClusterInfoImpl, SubsetSelectorImpl), with its messages. */
function validateSubsetConfig(cluster: JsonObject, path: string): void {
  const subsetConfig = messageField(cluster, 'lb_subset_config');
  if (subsetConfig === undefined) return;
  const subsetPath = childPath(path, 'lb_subset_config');
  const lbPolicy = enumField(cluster, 'lb_policy', 'ROUND_ROBIN');
  if (lbPolicy === 'CLUSTER_PROVIDED') {
    throw new FieldError(subsetPath, `cluster: LB policy ${lbPolicy} cannot be combined with lb_subset_config`);
  }
  const commonLbConfig = messageField(cluster, 'common_lb_config') ?? {};
  if (boolField(subsetConfig, 'locality_weight_aware') && commonLbConfig['locality_weighted_lb_config'] === undefined) {
    throw new FieldError(
      childPath(subsetPath, 'locality_weight_aware'),
      `Locality weight aware subset LB requires that a locality_weighted_lb_config be set in ${stringField(cluster, 'name')}`,
    );
  }
  const selectorsPath = childPath(subsetPath, 'subset_selectors');
  messageList(subsetConfig, 'subset_selectors').forEach((selector, s) => {
    const fieldPath = childPath(indexPath(selectorsPath, s), 'fallback_keys_subset');
    const fallbackKeys = new Set(stringList(selector, 'fallback_keys_subset'));
    if (enumField(selector, 'fallback_policy', 'NOT_DEFINED') !== 'KEYS_SUBSET') {
      // Only KEYS_SUBSET reads the list: anywhere else it is a mistake Envoy reports.
      if (fallbackKeys.size > 0) throw new FieldError(fieldPath, 'fallback_keys_subset can be set only for KEYS_SUBSET fallback_policy');
      return;
    }
    const keys = new Set(stringList(selector, 'keys'));
    if (fallbackKeys.size === 0) throw new FieldError(fieldPath, 'fallback_keys_subset cannot be empty');
    if ([...fallbackKeys].some((key) => !keys.has(key))) {
      throw new FieldError(fieldPath, 'fallback_keys_subset must be a subset of selector keys');
    }
    if (fallbackKeys.size === keys.size) throw new FieldError(fieldPath, 'fallback_keys_subset cannot be equal to keys');
  });
}

/** The protos bound each rate (above 1ms, base_interval required); Envoy orders the two. */
function validateDnsRefreshRates(cluster: JsonObject, path: string): void {
  const failureRate = messageField(cluster, 'dns_failure_refresh_rate');
  if (failureRate === undefined) return;
  const ratePath = childPath(path, 'dns_failure_refresh_rate');
  const base = durationMs(failureRate, 'base_interval') ?? 0;
  const max = durationMs(failureRate, 'max_interval');
  if (max === undefined) return;
  if (max < base) throw new FieldError(childPath(ratePath, 'max_interval'), 'must be greater than or equal to base_interval');
  // Equal passes the rule above but not this one: the backoff needs room to grow.
  if (base === max) throw new FieldError(childPath(ratePath, 'base_interval'), 'must be less than max_interval');
}

/**
 * A static load_assignment's rules, and an EDS ClusterLoadAssignment's (at path ''). Any
 * load_balancing_weight the proto allows (1..2^32-1) is taken, as in Envoy 1.16.
 */
export function validateLoadAssignment(loadAssignment: JsonObject, path: string, hostRule: HostRule): void {
  const dropOverloads = messageList(messageField(loadAssignment, 'policy') ?? {}, 'drop_overloads');
  if (dropOverloads.length > 1) {
    throw new FieldError(
      childPath(childPath(path, 'policy'), 'drop_overloads'),
      `Cluster drop_overloads config has ${dropOverloads.length} categories. Only one is supported, as in Envoy.`,
    );
  }
  messageList(loadAssignment, 'endpoints').forEach((locality, e) => {
    const localityPath = indexPath(childPath(path, 'endpoints'), e);
    messageList(locality, 'lb_endpoints').forEach((lbEndpoint, l) => {
      const lbEndpointPath = indexPath(childPath(localityPath, 'lb_endpoints'), l);
      const endpoint = messageField(lbEndpoint, 'endpoint');
      const endpointPath = childPath(lbEndpointPath, 'endpoint');
      if (endpoint === undefined) {
        throw new FieldError(endpointPath, 'missing required field (named endpoints are not supported)');
      }
      validateSocketAddress(messageField(endpoint, 'address'), childPath(endpointPath, 'address'), hostRule);
    });
  });
}
