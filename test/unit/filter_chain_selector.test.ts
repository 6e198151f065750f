// Filter chain matching as Envoy does it: server names exact before the longest wildcard before
// none, then transport and application protocols, no backtracking; duplicate rules and partial
// wildcards refused with Envoy's messages.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FieldError } from '../../src/config/errors';
import type { FilterChainMatch } from '../../src/config/model';
import { type ConnectionFacts, FilterChainSelector } from '../../src/listener/filter_chain_selector';

function match(overrides: Partial<FilterChainMatch>): FilterChainMatch {
  return { destinationPort: null, serverNames: [], transportProtocol: '', applicationProtocols: [], ...overrides };
}

function facts(overrides: Partial<ConnectionFacts>): ConnectionFacts {
  return { destinationPort: 443, serverName: '', transportProtocol: 'tls', applicationProtocols: [], ...overrides };
}

test('server names: exact, then the longest wildcard suffix, then chains without names', () => {
  const selector = new FilterChainSelector(
    [match({ serverNames: ['www.example.com'] }), match({ serverNames: ['*.example.com'] }), match({ serverNames: ['*.com'] }), match({})],
    '127.0.0.1:443',
  );
  assert.equal(selector.select(facts({ serverName: 'www.example.com' })), 0);
  assert.equal(selector.select(facts({ serverName: 'api.example.com' })), 1);
  assert.equal(selector.select(facts({ serverName: 'a.b.example.com' })), 1);
  assert.equal(selector.select(facts({ serverName: 'other.com' })), 2);
  assert.equal(selector.select(facts({ serverName: 'example.org' })), 3);
  assert.equal(selector.select(facts({ serverName: '' })), 3);
});

test('without a catch-all chain, an unknown name matches nothing', () => {
  const selector = new FilterChainSelector([match({ serverNames: ['a.example'] }), match({ serverNames: ['b.example'] })], '127.0.0.1:443');
  assert.equal(selector.select(facts({ serverName: 'b.example' })), 1);
  assert.equal(selector.select(facts({ serverName: 'c.example' })), null);
  assert.equal(selector.select(facts({})), null);
});

test('a more specific level wins with no backtracking to a less specific one', () => {
  const selector = new FilterChainSelector(
    [match({ serverNames: ['a.example'], transportProtocol: 'tls' }), match({ transportProtocol: 'raw_buffer' })],
    '127.0.0.1:443',
  );
  assert.equal(selector.select(facts({ serverName: 'a.example' })), 0);
  // a.example picks the first chain's name entry; it wants tls, so raw_buffer matches nothing.
  assert.equal(selector.select(facts({ serverName: 'a.example', transportProtocol: 'raw_buffer' })), null);
  assert.equal(selector.select(facts({ transportProtocol: 'raw_buffer' })), 1);
});

test('destination port and application protocols', () => {
  const selector = new FilterChainSelector(
    [match({ destinationPort: 8443 }), match({ applicationProtocols: ['h2'] }), match({ applicationProtocols: ['http/1.1'] }), match({})],
    '127.0.0.1:443',
  );
  assert.equal(selector.select(facts({ destinationPort: 8443, applicationProtocols: ['h2'] })), 0);
  assert.equal(selector.select(facts({ applicationProtocols: ['h2', 'http/1.1'] })), 1);
  assert.equal(selector.select(facts({ applicationProtocols: ['spdy', 'http/1.1'] })), 2);
  assert.equal(selector.select(facts({ applicationProtocols: ['spdy'] })), 3);
});

test('the destination port is asked for only when a chain matches on it', () => {
  assert.equal(new FilterChainSelector([match({ destinationPort: 8443 })], '127.0.0.1:443').matchesDestinationPort, true);
  assert.equal(new FilterChainSelector([match({ destinationPort: 8443 }), match({})], '127.0.0.1:443').matchesDestinationPort, true);
  const portless = new FilterChainSelector([match({ serverNames: ['a.example'] }), match({})], '127.0.0.1:443');
  assert.equal(portless.matchesDestinationPort, false);
  // Not looked up (0), it still selects by the other facts.
  assert.equal(portless.select(facts({ destinationPort: 0, serverName: 'a.example' })), 0);
  assert.equal(portless.select(facts({ destinationPort: 0 })), 1);
});

test('duplicate matching rules and partial wildcards are refused', () => {
  const refused = (matches: FilterChainMatch[], path: string, reason: string) =>
    assert.throws(
      () => new FilterChainSelector(matches, '127.0.0.1:10000'),
      (e: unknown) => e instanceof FieldError && e.fieldPath === path && e.reason === reason,
    );
  const duplicate = "error adding listener '127.0.0.1:10000': multiple filter chains with the same matching rules are defined";
  refused([match({}), match({})], 'filter_chains[1]', duplicate);
  refused([match({ serverNames: ['a.example', 'b.example'] }), match({ serverNames: ['b.example'] })], 'filter_chains[1]', duplicate);
  refused(
    [match({ serverNames: ['a*.example'] })],
    'filter_chains[0].filter_chain_match.server_names[0]',
    `error adding listener '127.0.0.1:10000': partial wildcards are not supported in "server_names"`,
  );
  assert.doesNotThrow(() => new FilterChainSelector([match({ serverNames: ['a.example'] }), match({ serverNames: ['*.example'] }), match({})], 'x'));
});
