// Static clusters: identity, discovery type, load balancer options, DNS refresh rates and
// endpoints. The one-of rules of the spec (type / cluster_type, the lb configs, zone aware /
// locality weighted) are enforced by decoding, which rejects two members of a proto oneof.

import { FieldError, FieldErrorCollector } from '../errors';
import { childPath, indexPath } from '../field_path';
import { durationMs, enumField, JsonObject, messageField, messageList, numberField, stringField, stringList } from '../json';
import { HostRule, validateSocketAddress } from './socket_address';

/** Load balancer option blocks and the lb_policy each belongs to. */
const LB_CONFIG_POLICIES: ReadonlyMap<string, string> = new Map([
  ['ring_hash_lb_config', 'RING_HASH'],
  ['least_request_lb_config', 'LEAST_REQUEST'],
  ['maglev_lb_config', 'MAGLEV'],
  ['round_robin_lb_config', 'ROUND_ROBIN'],
]);

/** Newer than the API we implement; the model has no place for them. */
const UNSUPPORTED_LB_POLICIES = new Set(['LOAD_BALANCING_POLICY_CONFIG']);

// The protos set the minimum (1); the maximum is Envoy's.
const MIN_ENDPOINT_WEIGHT = 1;
const MAX_ENDPOINT_WEIGHT = 128;

export function validateClusters(bootstrap: JsonObject, errors: FieldErrorCollector): void {
  const names = new Set<string>();
  const resources = messageField(bootstrap, 'static_resources') ?? {};
  messageList(resources, 'clusters').forEach((cluster, i) =>
    errors.run(() => {
      const path = indexPath('static_resources.clusters', i);
      // The protos require a name (proto_rules.ts); here it must also be unique.
      const name = stringField(cluster, 'name');
      if (names.has(name)) throw new FieldError(childPath(path, 'name'), `cluster manager: duplicate cluster '${name}'`);
      names.add(name);
      validateCluster(cluster, path);
    }),
  );
}

export function validateCluster(cluster: JsonObject, path: string): void {
  const customType = messageField(cluster, 'cluster_type');
  if (customType !== undefined) {
    const typeName = stringField(customType, 'name');
    throw new FieldError(
      childPath(childPath(path, 'cluster_type'), 'name'),
      `Didn't find a registered cluster factory implementation for name: '${typeName}'`,
    );
  }
  const type = enumField(cluster, 'type', 'STATIC');
  const loadAssignment = messageField(cluster, 'load_assignment');
  if (type === 'STATIC' && loadAssignment === undefined) {
    throw new FieldError(childPath(path, 'load_assignment'), 'a STATIC cluster needs a load_assignment (or hosts)');
  }
  validateLbPolicy(cluster, path);
  validateSubsetSelectors(cluster, path);
  validateDnsRefreshRates(cluster, path);
  if (loadAssignment !== undefined) {
    const hostRule: HostRule = type === 'STRICT_DNS' || type === 'LOGICAL_DNS' ? 'ip_or_hostname' : 'ip';
    validateLoadAssignment(loadAssignment, childPath(path, 'load_assignment'), hostRule);
  }
}

function validateLbPolicy(cluster: JsonObject, path: string): void {
  const lbPolicy = enumField(cluster, 'lb_policy', 'ROUND_ROBIN');
  if (UNSUPPORTED_LB_POLICIES.has(lbPolicy)) {
    throw new FieldError(childPath(path, 'lb_policy'), `${lbPolicy} is not supported`);
  }
  for (const [field, policy] of LB_CONFIG_POLICIES) {
    if (cluster[field] !== undefined && lbPolicy !== policy) {
      throw new FieldError(childPath(path, field), `requires lb_policy ${policy}, but lb_policy is ${lbPolicy}`);
    }
  }
}

/** Envoy's SubsetSelectorImpl rules, with its messages. */
function validateSubsetSelectors(cluster: JsonObject, path: string): void {
  const subsetConfig = messageField(cluster, 'lb_subset_config');
  if (subsetConfig === undefined) return;
  const selectorsPath = childPath(childPath(path, 'lb_subset_config'), 'subset_selectors');
  messageList(subsetConfig, 'subset_selectors').forEach((selector, s) => {
    if (enumField(selector, 'fallback_policy', 'NOT_DEFINED') !== 'KEYS_SUBSET') return;
    const fieldPath = childPath(indexPath(selectorsPath, s), 'fallback_keys_subset');
    const keys = new Set(stringList(selector, 'keys'));
    const fallbackKeys = new Set(stringList(selector, 'fallback_keys_subset'));
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
  if (max !== undefined && base >= max) {
    throw new FieldError(childPath(ratePath, 'base_interval'), 'must be less than max_interval');
  }
}

function validateLoadAssignment(loadAssignment: JsonObject, path: string, hostRule: HostRule): void {
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
      const weight = numberField(lbEndpoint, 'load_balancing_weight', MIN_ENDPOINT_WEIGHT);
      if (weight > MAX_ENDPOINT_WEIGHT) {
        throw new FieldError(
          childPath(lbEndpointPath, 'load_balancing_weight'),
          `weight ${weight} is out of range ${MIN_ENDPOINT_WEIGHT}..${MAX_ENDPOINT_WEIGHT}`,
        );
      }
    });
  });
}
