// Internal redirects: the decision (Envoy 1.16's checks, in its order, and the three predicates)
// and the configuration that makes a policy (its defaults, the deprecated route action fields,
// and what is refused by field path).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import type { InternalRedirectPolicy, InternalRedirectPredicateConfig, Route } from '../../src/config/model';
import { ALLOW_LISTED_ROUTES, PREVIOUS_ROUTES, SAFE_CROSS_SCHEME } from '../../src/config/names';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { decideInternalRedirect, InternalRedirectHistory, type RedirectCase, type RedirectTarget } from '../../src/filters/http/internal_redirect';
import { parseAbsoluteUrl } from '../../src/http/absolute_url';
import { type Json, v3Bootstrap } from '../helpers/config_fixtures';

const routeNamed = (name: string): Route => ({
  name,
  match: { prefix: '/', caseSensitive: true, headers: [], queryParameters: [], grpc: false },
  action: { kind: 'direct_response', status: 200, body: '', bodyFile: null },
});

const FROM = routeNamed('from');
const POLICY: InternalRedirectPolicy = { maxInternalRedirects: 1, redirectResponseCodes: [302], allowCrossSchemeRedirect: false, predicates: [] };

const redirectCase = (parts: Partial<RedirectCase> = {}): RedirectCase => ({
  route: FROM,
  policy: POLICY,
  requestReplayable: true,
  downstreamHttps: false,
  location: 'http://b.example/next?x=1',
  history: new InternalRedirectHistory(),
  ...parts,
});

/** Routes a target to a route named by its path's first segment; `/none` to no route. */
const byPath = (target: RedirectTarget): Route | null => (target.path.startsWith('/none') ? null : routeNamed(target.path.split(/[/?]/)[1]));

const refusalOf = (parts: Partial<RedirectCase>, routeOf = byPath): string | undefined => {
  const decision = decideInternalRedirect(redirectCase(parts), routeOf);
  return 'refusal' in decision ? decision.refusal : undefined;
};

test('an absolute http or https Location is a target; anything else is not', () => {
  assert.deepEqual(parseAbsoluteUrl('http://b.example/next?x=1'), { https: false, authority: 'b.example', path: '/next?x=1' });
  assert.deepEqual(parseAbsoluteUrl('HTTPS://b.example:8443'), { https: true, authority: 'b.example:8443', path: '/' });
  assert.deepEqual(parseAbsoluteUrl('http://[::1]:80?q'), { https: false, authority: '[::1]:80', path: '/?q' });
  // The fragment never goes into a request target.
  assert.deepEqual(parseAbsoluteUrl('http://b.example/p#frag'), { https: false, authority: 'b.example', path: '/p' });
  for (const bad of ['', '/relative', 'b.example/p', 'ftp://b.example/', 'http:///p', 'http://user@b.example/', 'http://b.example/a b', 'http://b.ex\u00e4mple/', 'http://b.example/\r\nx: y']) {
    assert.equal(parseAbsoluteUrl(bad), null, JSON.stringify(bad));
  }
});

test('a redirect is followed once every check passes, and the history counts it', () => {
  const history = new InternalRedirectHistory();
  const decision = decideInternalRedirect(redirectCase({ history }), byPath);
  assert.ok(!('refusal' in decision));
  assert.deepEqual(decision.target, { https: false, authority: 'b.example', path: '/next?x=1' });
  assert.equal(decision.route.name, 'next');
  assert.equal(history.count, 1);
});

test('the checks, in Envoy\'s order, each with its reason', () => {
  assert.equal(refusalOf({ requestReplayable: false }), 'request_not_complete');
  assert.equal(refusalOf({ location: undefined }), 'no_location');
  assert.equal(refusalOf({ location: '/next' }), 'bad_location');
  assert.equal(refusalOf({ location: 'https://b.example/next' }), 'unsafe_scheme');
  assert.equal(refusalOf({ downstreamHttps: true }), 'unsafe_scheme');
  // A bad Location is refused before a scheme or count is looked at.
  const spent = new InternalRedirectHistory();
  spent.count = 1;
  assert.equal(refusalOf({ location: 'nope', history: spent }), 'bad_location');
  assert.equal(refusalOf({ history: spent }), 'too_many_redirects');
  assert.equal(refusalOf({ location: 'http://b.example/none' }), 'no_route');
  const predicates: InternalRedirectPredicateConfig[] = [{ name: ALLOW_LISTED_ROUTES, allowedRouteNames: ['other'] }];
  assert.equal(refusalOf({ policy: { ...POLICY, predicates } }), 'predicate');
});

test('allow_cross_scheme_redirect lets a redirect change scheme; max_internal_redirects counts the whole request', () => {
  assert.equal(refusalOf({ location: 'https://b.example/next', policy: { ...POLICY, allowCrossSchemeRedirect: true } }), undefined);
  assert.equal(refusalOf({ downstreamHttps: true, policy: { ...POLICY, allowCrossSchemeRedirect: true } }), undefined);
  const history = new InternalRedirectHistory();
  const policy = { ...POLICY, maxInternalRedirects: 2 };
  assert.equal(refusalOf({ history, policy }), undefined);
  assert.equal(refusalOf({ history, policy }), undefined);
  assert.equal(refusalOf({ history, policy }), 'too_many_redirects');
  assert.equal(history.count, 2);
});

test('allow_listed_routes takes the target route by name', () => {
  const policy = { ...POLICY, predicates: [{ name: ALLOW_LISTED_ROUTES, allowedRouteNames: ['next', 'other'] }] as const };
  assert.equal(refusalOf({ policy }), undefined);
  assert.equal(refusalOf({ policy, location: 'http://b.example/third' }), 'predicate');
});

test('previous_routes refuses a route the same route already redirected this request to', () => {
  const policy = { ...POLICY, maxInternalRedirects: 10, predicates: [{ name: PREVIOUS_ROUTES }] as const };
  const history = new InternalRedirectHistory();
  assert.equal(refusalOf({ policy, history }), undefined);
  assert.equal(refusalOf({ policy, history, location: 'http://b.example/third' }), undefined);
  assert.equal(refusalOf({ policy, history }), 'predicate');
  // Another route redirecting to the same target is another edge.
  assert.equal(refusalOf({ policy, history, route: routeNamed('elsewhere') }), undefined);
  // A refused redirect is not counted.
  assert.equal(history.count, 3);
});

test('safe_cross_scheme allows https to http but not http to https', () => {
  const policy = { ...POLICY, allowCrossSchemeRedirect: true, predicates: [{ name: SAFE_CROSS_SCHEME }] as const };
  assert.equal(refusalOf({ policy, downstreamHttps: true, location: 'http://b.example/next' }), undefined);
  assert.equal(refusalOf({ policy, downstreamHttps: true, location: 'https://b.example/next' }), undefined);
  assert.equal(refusalOf({ policy, downstreamHttps: false, location: 'http://b.example/next' }), undefined);
  assert.equal(refusalOf({ policy, downstreamHttps: false, location: 'https://b.example/next' }), 'predicate');
});

test('predicates run in order: a refusal stops the ones after it', () => {
  const history = new InternalRedirectHistory();
  const policy = { ...POLICY, predicates: [{ name: ALLOW_LISTED_ROUTES, allowedRouteNames: [] }, { name: PREVIOUS_ROUTES }] as const };
  assert.equal(refusalOf({ policy, history }), 'predicate');
  // previous_routes never saw the refused redirect.
  assert.equal(history.follow('from', 'next'), true);
});

// ---- the configuration ------------------------------------------------------------------------

const ROUTE_PATH = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[1].route';
const predicate = (kind: string, config: Json = {}): Json => ({
  name: `envoy.internal_redirect_predicates.${kind}`,
  typed_config: { '@type': `type.googleapis.com/envoy.extensions.internal_redirect.${kind}.v3.${kind === 'allow_listed_routes' ? 'AllowListedRoutesConfig' : kind === 'previous_routes' ? 'PreviousRoutesConfig' : 'SafeCrossSchemeConfig'}`, ...config },
});

/** The fixture's bootstrap with `fields` on its second route's action. */
function withAction(fields: Json): string {
  const bootstrap = v3Bootstrap();
  bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[1].route = { cluster: 'web:v1', ...fields };
  return JSON.stringify(bootstrap);
}

function policyOf(fields: Json): InternalRedirectPolicy | undefined {
  const { bootstrap } = loadBootstrap({ extensions: builtinExtensions(), configYaml: withAction(fields), allowUnknownStaticFields: false });
  const filter = bootstrap.listeners[1].filterChains[0].filters[0];
  assert.ok(filter.kind === 'http_connection_manager');
  const action = filter.routeConfig.virtualHosts[0].routes[1].action;
  assert.ok(action.kind === 'route');
  return action.internalRedirectPolicy;
}

function loadError(fields: Json): string {
  try {
    loadBootstrap({ extensions: builtinExtensions(), configYaml: withAction(fields), allowUnknownStaticFields: false });
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.message;
  }
  assert.fail('the configuration loaded');
}

test('internal_redirect_policy: Envoy 1.16\'s defaults, its codes filtered, its predicates by registered name', () => {
  assert.deepEqual(policyOf({ internal_redirect_policy: {} }), { maxInternalRedirects: 1, redirectResponseCodes: [302], allowCrossSchemeRedirect: false, predicates: [] });
  assert.deepEqual(
    policyOf({
      internal_redirect_policy: {
        max_internal_redirects: 4,
        redirect_response_codes: [301, 200, 307, 304],
        allow_cross_scheme_redirect: true,
        predicates: [predicate('allow_listed_routes', { allowed_route_names: ['a', 'b'] }), predicate('previous_routes'), { name: 'mine', typed_config: predicate('safe_cross_scheme').typed_config }],
      },
    }),
    {
      maxInternalRedirects: 4,
      redirectResponseCodes: [301, 307],
      allowCrossSchemeRedirect: true,
      predicates: [{ name: ALLOW_LISTED_ROUTES, allowedRouteNames: ['a', 'b'] }, { name: PREVIOUS_ROUTES }, { name: SAFE_CROSS_SCHEME }],
    },
  );
  // Codes none of which counts: nothing is followed (an empty list would mean 302).
  assert.deepEqual(policyOf({ internal_redirect_policy: { redirect_response_codes: [200] } })?.redirectResponseCodes, []);
  assert.equal(policyOf({}), undefined);
});

test('the deprecated internal_redirect_action and max_internal_redirects count only without a policy', () => {
  assert.deepEqual(policyOf({ internal_redirect_action: 'HANDLE_INTERNAL_REDIRECT', max_internal_redirects: 3 }), {
    maxInternalRedirects: 3,
    redirectResponseCodes: [302],
    allowCrossSchemeRedirect: false,
    predicates: [],
  });
  assert.equal(policyOf({ internal_redirect_action: 'HANDLE_INTERNAL_REDIRECT' })?.maxInternalRedirects, 1);
  assert.equal(policyOf({ internal_redirect_action: 'PASS_THROUGH_INTERNAL_REDIRECT', max_internal_redirects: 3 }), undefined);
  assert.equal(policyOf({ internal_redirect_action: 'HANDLE_INTERNAL_REDIRECT', max_internal_redirects: 3, internal_redirect_policy: {} })?.maxInternalRedirects, 1);
});

test('what Envoy 1.16 refuses, or this build does not honor, is refused by field path', () => {
  const policy = `${ROUTE_PATH}.internal_redirect_policy`.replace(/[.[\]]/g, '\\$&');
  assert.match(loadError({ internal_redirect_policy: { predicates: [{ name: 'envoy.internal_redirect_predicates.bogus', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate' } }] } }), new RegExp(`${policy}\\.predicates\\[0\\]\\.name: Didn't find a registered implementation`));
  assert.match(
    loadError({ internal_redirect_policy: { predicates: [{ name: 'envoy.internal_redirect_predicates.previous_routes', typed_config: predicate('safe_cross_scheme').typed_config }] } }),
    new RegExp(`${policy}\\.predicates\\[0\\]\\.typed_config\\.@type: expected type`),
  );
  assert.match(loadError({ internal_redirect_policy: { predicates: [predicate('allow_listed_routes', { allowed_route_names: [''] })] } }), new RegExp(`${policy}\\.predicates\\[0\\]\\.typed_config\\.allowed_route_names\\[0\\]`));
  assert.match(loadError({ internal_redirect_policy: { redirect_response_codes: [301, 302, 303, 307, 308, 302] } }), new RegExp(`${policy}\\.redirect_response_codes: value must contain no more than 5`));
  // A TypedExtensionConfig's typed_config is required.
  assert.match(loadError({ internal_redirect_policy: { predicates: [{ name: 'envoy.internal_redirect_predicates.previous_routes' }] } }), new RegExp(`${policy}\\.predicates\\[0\\]\\.typed_config: value is required`));
  // Newer than Envoy 1.16.
  assert.match(loadError({ internal_redirect_policy: { response_headers_to_copy: ['x-a'] } }), new RegExp(`${policy}\\.response_headers_to_copy: response_headers_to_copy is not implemented`));
});
