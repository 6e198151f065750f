// An RDS RouteConfiguration resource goes through the stages of an inline route_config: what it
// admits becomes the same model, and what it refuses is refused at the field's path within the
// resource (the protos' rules, validation, --disable-extensions, the capability check).
// validate_clusters is false by default for RDS, as in Envoy.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FieldError } from '../../src/config/errors';
import type { JsonObject } from '../../src/config/json';
import { decodeProtoJson } from '../../src/config/proto_json';
import { protoSchema } from '../../src/config/schema';
import { bootstrapValidationContext } from '../../src/config/validation/bootstrap';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { loadRouteConfigResource } from '../../src/extensions/network/http_connection_manager/route_config_resource';
import type { RouteConfiguration } from '../../src/config/model';

const schema = protoSchema();
const extensions = builtinExtensions();
const CSRF_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.csrf.v3.CsrfPolicy';

function routes(route: JsonObject, extra: JsonObject = {}): JsonObject {
  return { name: 'routes', virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, ...route }] }], ...extra };
}

/** As the resource decoder hands it over: decoded against the v3 protos. */
function load(resource: JsonObject, disabled: readonly string[] = []): RouteConfiguration {
  const decoded = decodeProtoJson(schema, schema.root.lookupType('envoy.config.route.v3.RouteConfiguration'), resource, { allowUnknownFields: false });
  const context = { ...bootstrapValidationContext({}, extensions), clusters: new Set(['a']) };
  return loadRouteConfigResource(schema, decoded.json, context, extensions.resolveDisabled(disabled).keys);
}

function refusal(resource: JsonObject, disabled: readonly string[] = []): { path: string; reason: string } {
  try {
    load(resource, disabled);
  } catch (error) {
    assert.ok(error instanceof FieldError, String(error));
    return { path: error.fieldPath, reason: error.reason };
  }
  assert.fail('the resource was accepted');
}

test('an accepted resource is modelled as an inline route_config is', () => {
  const config = load(routes({ route: { cluster: 'a', timeout: '2s' } }));
  assert.equal(config.name, 'routes');
  const action = config.virtualHosts[0]!.routes[0]!.action;
  assert.equal(action.kind, 'route');
  assert.equal(action.kind === 'route' && action.cluster, 'a');
  assert.equal(action.kind === 'route' && action.timeoutMs, 2000);
});

test('validate_clusters: false by default for RDS; true checks the clusters given', () => {
  assert.doesNotThrow(() => load(routes({ route: { cluster: 'later' } })));
  assert.deepEqual(refusal(routes({ route: { cluster: 'later' } }, { validate_clusters: true })), {
    path: 'virtual_hosts[0].routes[0].route.cluster',
    reason: "route: unknown cluster 'later'",
  });
});

test('what a resource cannot have is refused at its path within the resource', () => {
  // Validation.
  assert.deepEqual(refusal(routes({ route: { cluster: 'a', timeout: '-1s' } })).path, 'virtual_hosts[0].routes[0].route.timeout');
  // The protos' rules: a route needs an action.
  assert.equal(refusal(routes({})).path, 'virtual_hosts[0].routes[0].action');
  // The capability check: VHDS, and a retry setting the router does not act on.
  const vhds = refusal(routes({ route: { cluster: 'a' } }, { vhds: { config_source: { ads: {} } } }));
  assert.equal(vhds.path, 'vhds');
  assert.match(vhds.reason, /^vhds \(virtual host discovery, VHDS\) is not supported by this build/);
  assert.equal(
    refusal(routes({ route: { cluster: 'a', retry_policy: { retry_on: '5xx', retriable_headers: [{ name: 'x' }] } } })).path,
    'virtual_hosts[0].routes[0].route.retry_policy.retriable_headers',
  );
});

test('a per-route config of a disabled filter is refused at its key', () => {
  const resource = routes({ route: { cluster: 'a' }, typed_per_filter_config: { 'envoy.filters.http.csrf': { '@type': CSRF_TYPE, filter_enabled: { default_value: { numerator: 100 } } } } });
  assert.doesNotThrow(() => load(resource));
  const refused = refusal(resource, ['proxy.filters.http/proxy.filters.http.csrf']);
  assert.equal(refused.path, 'virtual_hosts[0].routes[0].typed_per_filter_config["envoy.filters.http.csrf"]');
  assert.match(refused.reason, /disabled by --disable-extensions/);
});
