import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldError } from '../../src/config/errors';
import { validateCluster } from '../../src/config/validation/clusters';
import { validateSocketAddress } from '../../src/config/validation/socket_address';
import { validateTcpProxy } from '../../src/config/validation/tcp_proxy';

// The validators read decoded (canonical) v3 JSON and need no schema, files or I/O.

test('socket addresses: an IP, or a hostname where DNS resolves it', () => {
  const address = { socket_address: { address: 'db.internal', port_value: 5432 } };
  assert.doesNotThrow(() => validateSocketAddress(address, 'a', 'ip_or_hostname'));
  assert.throws(() => validateSocketAddress(address, 'a', 'ip'), new FieldError('a.socket_address.address', 'malformed IP address: db.internal'));
  assert.doesNotThrow(() => validateSocketAddress({ socket_address: { address: '::1', port_value: 0 } }, 'a', 'ip'));
  assert.throws(
    () => validateSocketAddress({ socket_address: { address: '::1', named_port: 'http' } }, 'a', 'ip'),
    new FieldError('a.socket_address.named_port', 'named ports are not supported; use port_value'),
  );
  assert.throws(
    () => validateSocketAddress({ socket_address: { address: '::1', protocol: 'UDP' } }, 'a', 'ip'),
    new FieldError('a.socket_address.protocol', 'UDP is not supported'),
  );
  assert.throws(() => validateSocketAddress({}, 'a', 'ip'), new FieldError('a.socket_address', 'missing required field'));
});

test('a cluster is checked on its own, at the path it is given', () => {
  const cluster = { name: 'c', type: 'EDS', lb_policy: 'MAGLEV', ring_hash_lb_config: {} };
  assert.throws(
    () => validateCluster(cluster, 'clusters[4]'),
    new FieldError('clusters[4].ring_hash_lb_config', 'requires lb_policy RING_HASH, but lb_policy is MAGLEV'),
  );
  assert.doesNotThrow(() => validateCluster({ name: 'c', type: 'EDS' }, 'clusters[4]'));
  assert.doesNotThrow(() =>
    validateCluster({ name: 'c', type: 'STRICT_DNS', dns_failure_refresh_rate: { base_interval: '0.000500s' } }, 'x'),
  );
});

test('tcp_proxy needs an existing cluster', () => {
  const config = { stat_prefix: 's', cluster: 'a' };
  assert.doesNotThrow(() => validateTcpProxy(config, 'p', new Set(['a'])));
  assert.throws(() => validateTcpProxy(config, 'p', new Set(['b'])), new FieldError('p.cluster', "tcp_proxy: unknown cluster 'a'"));
});
