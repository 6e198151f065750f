import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RedirectAction } from '../../src/config/model';
import { redirectLocation, type RedirectedRequest } from '../../src/filters/http/redirect_location';

const NONE: RedirectAction = { kind: 'redirect', scheme: null, host: null, port: null, path: null, prefixRewrite: null, status: 301, stripQuery: false };
const redirect = (parts: Partial<RedirectAction>): RedirectAction => ({ ...NONE, ...parts });
const request = (parts: Partial<RedirectedRequest> = {}): RedirectedRequest => ({ scheme: 'http', authority: 'example.com', path: '/a/b?q=1', matchedLength: 2, ...parts });

test('every part the redirect leaves unset is the request\'s own', () => {
  assert.equal(redirectLocation(redirect({}), request()), 'http://example.com/a/b?q=1');
  assert.equal(redirectLocation(null, request({ scheme: 'https', authority: 'h:8443' })), 'https://h:8443/a/b?q=1');
});

test('host, port and scheme', () => {
  assert.equal(redirectLocation(redirect({ host: 'other.net' }), request({ authority: 'example.com:8080' })), 'http://other.net/a/b?q=1');
  assert.equal(redirectLocation(redirect({ port: 9000 }), request({ authority: 'example.com:8080' })), 'http://example.com:9000/a/b?q=1');
  assert.equal(redirectLocation(redirect({ host: 'other.net', port: 9000 }), request()), 'http://other.net:9000/a/b?q=1');
  assert.equal(redirectLocation(redirect({ scheme: 'https' }), request({ authority: 'example.com:80' })), 'https://example.com/a/b?q=1');
  // Only the old scheme's default port goes with a scheme change.
  assert.equal(redirectLocation(redirect({ scheme: 'https' }), request({ authority: 'example.com:8080' })), 'https://example.com:8080/a/b?q=1');
  assert.equal(redirectLocation(redirect({ scheme: 'http' }), request({ scheme: 'https', authority: 'example.com:443' })), 'http://example.com/a/b?q=1');
  assert.equal(redirectLocation(redirect({ port: 8443 }), request({ authority: '[::1]:8080' })), 'http://[::1]:8443/a/b?q=1');
  assert.equal(redirectLocation(redirect({ scheme: 'https' }), request({ authority: '[::1]' })), 'https://[::1]/a/b?q=1');
});

test('path_redirect keeps the request\'s query unless it has its own; prefix_rewrite replaces the matched part', () => {
  assert.equal(redirectLocation(redirect({ path: '/new' }), request()), 'http://example.com/new?q=1');
  assert.equal(redirectLocation(redirect({ path: '/new?x=2' }), request()), 'http://example.com/new?x=2');
  assert.equal(redirectLocation(redirect({ path: '/new?x=2', stripQuery: true }), request()), 'http://example.com/new?x=2');
  assert.equal(redirectLocation(redirect({ path: '/new', stripQuery: true }), request()), 'http://example.com/new');
  assert.equal(redirectLocation(redirect({ prefixRewrite: '/v2' }), request()), 'http://example.com/v2/b?q=1');
  assert.equal(redirectLocation(redirect({ prefixRewrite: '/v2', stripQuery: true }), request()), 'http://example.com/v2/b');
  assert.equal(redirectLocation(redirect({ stripQuery: true }), request()), 'http://example.com/a/b');
});
