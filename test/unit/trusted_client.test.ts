import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestHead } from '../../src/http/message';
import { forwardedForAddress, forwardedForOf, isEdgeDroppedHeader, isInternalAddress, trustedClient } from '../../src/http/trusted_client';

const edge = { useRemoteAddress: true, xffNumTrustedHops: 0 };
const inner = { useRemoteAddress: false, xffNumTrustedHops: 0 };

test('internal addresses: RFC 1918, 127.0.0.1, fd00::/8 and ::1, IPv4-mapped too', () => {
  for (const ip of ['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '127.0.0.1', '::1', 'fd12::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1']) {
    assert.equal(isInternalAddress(ip), true, ip);
  }
  for (const ip of ['8.8.8.8', '172.32.0.1', '172.15.0.1', '192.169.0.1', '127.0.0.2', 'fe80::1', '2001:db8::1', 'not-an-ip', '']) {
    assert.equal(isInternalAddress(ip), false, ip);
  }
});

test('internal requests as Envoy decides: use_remote_address trusts a peer that sent no x-forwarded-for, else the single trusted entry', () => {
  const internal = (trust: typeof edge, peer: string, xff: string | null): boolean => trustedClient(trust, peer, 1, xff).internal;
  assert.equal(internal(edge, '127.0.0.1', null), true);
  assert.equal(internal(edge, '10.0.0.5', null), true);
  assert.equal(internal(edge, '203.0.113.9', null), false);
  assert.equal(internal(edge, '127.0.0.1', '10.0.0.1'), false);
  assert.equal(internal({ useRemoteAddress: true, xffNumTrustedHops: 1 }, '127.0.0.1', '10.0.0.1'), false);
  // Without use_remote_address, no x-forwarded-for means external, whoever the peer is.
  assert.equal(internal(inner, '127.0.0.1', null), false);
  assert.equal(internal(inner, '203.0.113.9', '10.0.0.1'), true);
  assert.equal(internal(inner, '127.0.0.1', ' 203.0.113.9 '), false);
  assert.equal(internal(inner, '127.0.0.1', '10.0.0.1, 10.0.0.2'), false);
  assert.equal(internal({ useRemoteAddress: false, xffNumTrustedHops: 1 }, '127.0.0.1', '10.0.0.1, 10.0.0.2'), false);
  assert.deepEqual(forwardedForAddress('1.2.3.4, 10.0.0.2', 1), { address: '1.2.3.4', single: false });
  assert.deepEqual(forwardedForAddress('10.0.0.2', 1), { address: null, single: false });
  assert.deepEqual(forwardedForAddress('garbage', 0), { address: null, single: false });
});

// The four examples of Envoy 1.16's x-forwarded-for documentation, and the fall-backs to the peer.
test('the trusted client address: the peer at the edge, x-forwarded-for entries behind trusted hops', () => {
  // An edge proxy, nobody trusted in front: the peer, with its port.
  assert.deepEqual(trustedClient(edge, '192.0.2.10', 5000, '203.0.113.128, 203.0.113.10, 203.0.113.1'), { ip: '192.0.2.10', port: 5000, internal: false, edge: true });
  // An internal proxy behind it: the last entry, port 0 as Envoy prints an address from the header.
  assert.deepEqual(trustedClient(inner, '10.11.12.13', 5000, '203.0.113.128, 203.0.113.10, 203.0.113.1, 192.0.2.10'), { ip: '192.0.2.10', port: 0, internal: false, edge: false });
  // An edge proxy behind two trusted proxies: the entry the first of them appended.
  const twoHops = { useRemoteAddress: true, xffNumTrustedHops: 2 };
  assert.deepEqual(trustedClient(twoHops, '192.0.2.11', 5000, '203.0.113.128, 203.0.113.10, 192.0.2.10'), { ip: '203.0.113.10', port: 0, internal: false, edge: true });
  // The internal proxy behind that edge: two entries skipped.
  const twoHopsInner = { useRemoteAddress: false, xffNumTrustedHops: 2 };
  assert.equal(trustedClient(twoHopsInner, '10.11.12.13', 5000, '203.0.113.128, 203.0.113.10, 192.0.2.10, 192.0.2.11').ip, '203.0.113.10');
  // Too few entries, or not an address: the peer.
  assert.deepEqual(trustedClient(twoHops, '192.0.2.11', 5000, '192.0.2.10'), { ip: '192.0.2.11', port: 5000, internal: false, edge: true });
  assert.equal(trustedClient(inner, '127.0.0.1', 5000, '1.1.1.1, not-an-ip').ip, '127.0.0.1');
  assert.equal(trustedClient(inner, '127.0.0.1', 5000, '1.1.1.1,').ip, '127.0.0.1');
  assert.equal(trustedClient(inner, '127.0.0.1', 5000, null).ip, '127.0.0.1');
  assert.equal(trustedClient(inner, '127.0.0.1', 5000, '2001:db8::1').ip, '2001:db8::1');
  // An internal peer with no x-forwarded-for is no edge request.
  assert.deepEqual(trustedClient(edge, '10.0.0.5', 5000, null), { ip: '10.0.0.5', port: 5000, internal: true, edge: false });
});

test('x-forwarded-for as one list, repeats joined; the headers an edge request may not bring', () => {
  const head = new RequestHead('GET', '/', false);
  assert.equal(forwardedForOf(head), null);
  head.headers.push('x-forwarded-for', '1.1.1.1, 2.2.2.2', 'x-forwarded-for', ' 3.3.3.3 ');
  assert.equal(forwardedForOf(head), '1.1.1.1, 2.2.2.2,  3.3.3.3 ');
  assert.equal(trustedClient(inner, '127.0.0.1', 1, forwardedForOf(head)).ip, '3.3.3.3');
  for (const name of ['x-proxy-downstream-service-cluster', 'x-proxy-downstream-service-node', 'x-proxy-decorator-operation']) assert.equal(isEdgeDroppedHeader(name), true, name);
  assert.equal(isEdgeDroppedHeader('x-forwarded-for'), false);
});
