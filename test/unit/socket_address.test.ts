// Envoy's asString() of a socket address (src/network/socket_address.ts): IPv6 in brackets, scoped
// ones included; IPv4 and names (a STRICT_DNS host before it resolves) as they are.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressString } from '../../src/network/socket_address';

test('an IPv6 address is bracketed; IPv4, a name and a string with colons that is not IPv6 are not', () => {
  assert.equal(addressString({ address: '127.0.0.1', port: 80 }), '127.0.0.1:80');
  assert.equal(addressString({ address: '::1', port: 443 }), '[::1]:443');
  assert.equal(addressString({ address: '::ffff:10.0.0.1', port: 1 }), '[::ffff:10.0.0.1]:1');
  assert.equal(addressString({ address: 'fe80::1%eth0', port: 8080 }), '[fe80::1%eth0]:8080');
  assert.equal(addressString({ address: 'backend.example', port: 9000 }), 'backend.example:9000');
  // A colon alone does not make an IPv6 address.
  assert.equal(addressString({ address: 'not:an:address', port: 1 }), 'not:an:address:1');
});
