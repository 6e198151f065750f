import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldError } from '../../src/config/errors';
import { validateClusterManager } from '../../src/config/validation/cluster_manager';
import { validateCluster } from '../../src/config/validation/clusters';
import { checkCapabilities } from '../../src/config/capabilities';
import { loadBootstrap } from '../../src/config/load';
import { validateStatsConfig } from '../../src/config/validation/stats_config';
import { validateSocketAddress } from '../../src/config/validation/socket_address';
import { validateTcpProxy } from '../../src/extensions/network/tcp_proxy';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

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
  const cluster = { name: 'c', type: 'EDS', eds_cluster_config: { eds_config: { path: 'eds.yaml' } }, lb_policy: 'MAGLEV', ring_hash_lb_config: {} };
  assert.throws(
    () => validateCluster(cluster, 'clusters[4]', builtinExtensions()),
    new FieldError('clusters[4].ring_hash_lb_config', 'requires lb_policy RING_HASH, but lb_policy is MAGLEV'),
  );
  assert.doesNotThrow(() => validateCluster({ name: 'c', type: 'EDS', eds_cluster_config: { eds_config: { path: 'eds.yaml' } } }, 'clusters[4]', builtinExtensions()));
  assert.doesNotThrow(() =>
    validateCluster({ name: 'c', type: 'STRICT_DNS', dns_failure_refresh_rate: { base_interval: '0.000500s' } }, 'x', builtinExtensions()),
  );
});

test('tcp_proxy needs an existing cluster', () => {
  const config = { stat_prefix: 's', cluster: 'a' };
  assert.doesNotThrow(() => validateTcpProxy(config, 'p', new Set(['a'])));
  assert.throws(() => validateTcpProxy(config, 'p', new Set(['b'])), new FieldError('p.cluster', "tcp_proxy: unknown cluster 'a'"));
});

test('stats_config: tag names used once, a name alone must name a default rule, bucket bounds finite', () => {
  const stats = (stats_config: object) => () => validateStatsConfig({ stats_config } as never);
  assert.doesNotThrow(stats({ stats_tags: [{ tag_name: 'region', fixed_value: 'eu' }, { tag_name: 'zone', regex: '^x' }] }));
  assert.doesNotThrow(stats({ use_all_default_tags: false, stats_tags: [{ tag_name: 'envoy.cluster_name' }] }));
  assert.throws(stats({ stats_tags: [{ tag_name: 'envoy.cluster_name' }] }), new FieldError('stats_config.stats_tags[0].tag_name', "Tag name 'envoy.cluster_name' specified twice."));
  assert.throws(
    stats({ stats_tags: [{ tag_name: 'a', fixed_value: '1' }, { tag_name: 'a', fixed_value: '2' }] }),
    new FieldError('stats_config.stats_tags[1].tag_name', "Tag name 'a' specified twice."),
  );
  assert.throws(stats({ stats_tags: [{ fixed_value: '1' }] }), new FieldError('stats_config.stats_tags[0].tag_name', 'tag_name cannot be empty'));
  assert.throws(
    stats({ use_all_default_tags: false, stats_tags: [{ tag_name: 'custom' }] }),
    new FieldError('stats_config.stats_tags[0]', "No regex specified for tag specifier and no default regex for name: 'custom'"),
  );
  const buckets = (rule: object) => stats({ histogram_bucket_settings: [{ match: { prefix: 'a' }, buckets: [1] }, rule] });
  assert.doesNotThrow(buckets({ match: { exact: '' }, buckets: [0.5, 2] }));
  // safe_regex is RE2: no lookaround, and a program within google_re2.max_program_size (100 unset).
  const regex = (matcher: object) => buckets({ match: { safe_regex: matcher }, buckets: [1] });
  assert.throws(regex({ regex: 'a(?=b)' }), (e: unknown) => e instanceof FieldError && e.fieldPath === 'stats_config.histogram_bucket_settings[1].match.safe_regex.regex');
  assert.throws(regex({ regex: 'x{150}' }), (e: unknown) => {
    assert.ok(e instanceof FieldError);
    assert.equal(e.fieldPath, 'stats_config.histogram_bucket_settings[1].match.safe_regex.regex');
    assert.match(e.message, /invalid regex 'x\{150\}': program size of \d+ > max program size of 100/);
    return true;
  });
  assert.doesNotThrow(regex({ google_re2: { max_program_size: 1000 }, regex: 'x{150}' }));
  // Required match and buckets, bounds above 0 and distinct: the protos' rules (config_proto_rules).
  assert.throws(buckets({ match: { exact: 'a' }, buckets: [2, 'Infinity'] }), new FieldError('stats_config.histogram_bucket_settings[1].buckets[1]', 'must be a finite number, got Infinity'));
});

test('cluster_manager.local_cluster_name must name a defined cluster, as Envoy requires', { timeout: 5000 }, () => {
  const bootstrap = { cluster_manager: { local_cluster_name: 'mesh' } };
  assert.doesNotThrow(() => validateClusterManager(bootstrap, new Set(['mesh', 'backend'])));
  assert.throws(
    () => validateClusterManager(bootstrap, new Set(['backend'])),
    new FieldError('cluster_manager.local_cluster_name', "local cluster 'mesh' must be defined"),
  );
  assert.doesNotThrow(() => validateClusterManager({}, new Set()));
});

test('cluster_manager.local_cluster_name reaches the model and the capability check accepts it', { timeout: 5000 }, () => {
  const cluster = (name: string) => ({
    name,
    connect_timeout: '1s',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '10.0.0.1', port_value: 80 } } } }] }] },
  });
  const config = { cluster_manager: { local_cluster_name: 'mesh' }, static_resources: { clusters: [cluster('mesh'), cluster('backend')] } };
  const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(config), bootstrapVersion: 3, allowUnknownStaticFields: false });
  assert.equal(loaded.bootstrap.localClusterName, 'mesh');
  assert.doesNotThrow(() => checkCapabilities(config, builtinExtensions()));
  const unset = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify({ static_resources: { clusters: [cluster('mesh')] } }), bootstrapVersion: 3, allowUnknownStaticFields: false });
  assert.equal(unset.bootstrap.localClusterName, null);
  assert.throws(
    () => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify({ ...config, static_resources: { clusters: [cluster('backend')] } }), bootstrapVersion: 3, allowUnknownStaticFields: false }),
    /cluster_manager\.local_cluster_name: local cluster 'mesh' must be defined/,
  );
});
