// proxy.filters.http.csrf: the origin rules (source from Origin, else Referer, compared with the
// Host by host and port, or accepted by an additional origin), and its typed_config as loading
// admits or refuses it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import type { RuntimeFraction } from '../../src/config/model';
import { compileCsrfPolicy, hostAndPort, originAllowed, sourceOrigin } from '../../src/filters/http/csrf';
import { RequestHead } from '../../src/http/message';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { Json, v3Bootstrap } from '../helpers/config_fixtures';

const CSRF_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.csrf.v3.CsrfPolicy';
const HCM_PATH = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';
const ALWAYS: RuntimeFraction = { defaultValue: { numerator: 100, denominator: 'HUNDRED' }, runtimeKey: 'csrf.enabled' };

function head(headers: string[]): RequestHead {
  const h = new RequestHead('POST', '/', false);
  h.authority = 'app.example:8080';
  h.headers.push(...headers);
  return h;
}

test("a source origin is Origin's host and port, else Referer's; a value that is no URL counts as it is", () => {
  assert.equal(hostAndPort('https://app.example:8080'), 'app.example:8080');
  assert.equal(hostAndPort('http://app.example/path?q#f'), 'app.example');
  assert.equal(hostAndPort('app.example:8080'), 'app.example:8080');
  assert.equal(hostAndPort('null'), 'null');
  assert.equal(hostAndPort(''), '');
  assert.equal(sourceOrigin(head(['origin', 'http://a.example', 'referer', 'http://b.example/page'])), 'a.example');
  assert.equal(sourceOrigin(head(['referer', 'http://b.example:81/page'])), 'b.example:81');
  // An empty Origin is none: the Referer speaks.
  assert.equal(sourceOrigin(head(['origin', '', 'referer', 'https://b.example/'])), 'b.example');
  assert.equal(sourceOrigin(head([])), '');
});

test('an origin is allowed when it is the destination, by host and port, or one of the additional origins', () => {
  const none = compileCsrfPolicy({ filterEnabled: ALWAYS, additionalOrigins: [] });
  assert.equal(originAllowed(none, 'app.example:8080', 'app.example:8080'), true);
  assert.equal(originAllowed(none, 'app.example', 'app.example:8080'), false);
  assert.equal(originAllowed(none, 'App.example:8080', 'app.example:8080'), false);
  assert.equal(originAllowed(none, '', 'app.example:8080'), false);
  const extra = compileCsrfPolicy({
    filterEnabled: ALWAYS,
    additionalOrigins: [
      { kind: 'suffix', value: '.trusted.example', ignoreCase: false },
      { kind: 'safe_regex', value: 'partner-[0-9]+\\.example', ignoreCase: false },
    ],
  });
  assert.equal(originAllowed(extra, 'cdn.trusted.example', 'app.example:8080'), true);
  assert.equal(originAllowed(extra, 'partner-7.example', 'app.example:8080'), true);
  // A regex matches the whole origin.
  assert.equal(originAllowed(extra, 'partner-7.example.evil', 'app.example:8080'), false);
  assert.equal(originAllowed(extra, 'evil.example', 'app.example:8080'), false);
});

function loadWith(filter: Json) {
  const bootstrap = v3Bootstrap();
  const hcm = bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config;
  hcm.http_filters.unshift(filter);
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
}

test('its typed_config: the model, by its names and its v2 type', () => {
  for (const filter of [
    { name: 'envoy.filters.http.csrf', typed_config: { '@type': CSRF_TYPE, filter_enabled: { default_value: { numerator: 100 }, runtime_key: 'csrf.enabled' } } },
    { name: 'envoy.csrf', typed_config: { '@type': 'type.googleapis.com/envoy.config.filter.http.csrf.v2.CsrfPolicy', filter_enabled: { default_value: { numerator: 100 }, runtime_key: 'csrf.enabled' } } },
  ]) {
    const hcm = loadWith(filter).bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
    assert.ok(hcm.kind === 'http_connection_manager');
    assert.deepEqual(hcm.httpFilters[0], { name: 'proxy.filters.http.csrf', csrf: { filterEnabled: ALWAYS, additionalOrigins: [] } });
  }
});

test('typed_config errors carry the field path', () => {
  const at = `${HCM_PATH}.http_filters[0]`;
  const cases: Array<[Json, string]> = [
    // Envoy validates the default message of a filter configured without typed_config.
    [{ name: 'envoy.filters.http.csrf' }, `${at}.typed_config.filter_enabled: value is required`],
    [{ name: 'envoy.filters.http.csrf', typed_config: { '@type': CSRF_TYPE } }, `${at}.typed_config.filter_enabled: value is required`],
    [
      { name: 'envoy.filters.http.csrf', typed_config: { '@type': CSRF_TYPE, filter_enabled: { default_value: {} }, additional_origins: [{ prefix: '' }] } },
      `${at}.typed_config.additional_origins[0].prefix: value length must be at least 1 runes`,
    ],
    [
      { name: 'envoy.filters.http.csrf', typed_config: { '@type': CSRF_TYPE, filter_enabled: { default_value: {} }, additional_origins: [{ safe_regex: { google_re2: {}, regex: 'a(' } }] } },
      `${at}.typed_config.additional_origins[0].safe_regex.regex: invalid regex 'a(': missing closing )`,
    ],
  ];
  for (const [filter, message] of cases) {
    assert.throws(() => loadWith(filter), (e: unknown) => e instanceof ConfigError && e.message === `--config-yaml: ${message}`, message);
  }
});
