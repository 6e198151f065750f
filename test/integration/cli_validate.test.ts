// --mode validate: the whole bootstrap checked, nothing opened (ports, shared memory, hot
// restart sockets), `configuration '<path>' OK` and exit 0, or the problem and exit 1.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import * as protobuf from 'protobufjs/light';
import * as protojson from 'protobufjs/ext/protojson';
import { protoSchema } from '../../src/config/schema';
import { servableV3 } from '../helpers/cli_bootstraps';
import type { Json } from '../helpers/config_fixtures';
import { Exited, mapLimited, runToExit } from '../helpers/cli_runs';
import { uniqueBaseId } from '../helpers/hot_restart_run';
import { makeTempDir, PROXY_BIN } from '../helpers/proxy_process';

let dir = '';

before(() => {
  dir = makeTempDir();
});

after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function listen(): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

test('a valid bootstrap: OK and exit 0, with its ports taken and no socket or region opened', { timeout: 30000 }, async (t) => {
  const occupied = await listen();
  try {
    const port = (occupied.address() as net.AddressInfo).port;
    const config = servableV3(path.join(dir, 'admin_access.log'));
    config.admin.address.socket_address.port_value = port;
    for (const listener of config.static_resources.listeners) listener.address.socket_address.port_value = port;
    const configPath = path.join(dir, 'occupied.json');
    fs.writeFileSync(configPath, JSON.stringify(config));
    const baseId = uniqueBaseId();
    const socketPath = `@cli_validate_${process.pid}`;
    const addressPath = path.join(dir, 'admin_address');

    const started = process.hrtime.bigint();
    const result = await runToExit(['-c', configPath, '--mode', 'validate', '--base-id', String(baseId), '--socket-path', socketPath, '--admin-address-path', addressPath]);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assert.deepEqual(result, { code: 0, stdout: `configuration '${configPath}' OK\n`, stderr: '' });
    // Reported, not asserted: the machine is shared.
    t.diagnostic(`validate took ${ms.toFixed(0)} ms`);

    assert.ok(!fs.existsSync(addressPath), 'no admin listener');
    assert.ok(!fs.existsSync(`/dev/shm/proxy_shared_memory_${baseId * 10}`), 'no shared memory region');
    assert.ok(!fs.readFileSync('/proc/net/unix', 'utf8').includes(socketPath), 'no hot restart socket');
    assert.ok(!fs.existsSync(path.join(dir, 'admin_access.log')), 'no access log');
  } finally {
    await new Promise((resolve) => occupied.close(resolve));
  }
});

test('--config-yaml alone validates as the empty path', { timeout: 20000 }, async () => {
  const result = await runToExit(['--mode', 'validate', '--config-yaml', JSON.stringify(servableV3('/dev/null'))]);
  assert.deepEqual(result, { code: 0, stdout: "configuration '' OK\n", stderr: '' });
});

const CLUSTER = 'static_resources.clusters[1]';
const plain = (b: Json): Json => b.static_resources.clusters[1];
const subset = (b: Json, selector: Json) => (plain(b).lb_subset_config = { subset_selectors: [{ keys: ['a', 'b'], fallback_policy: 'KEYS_SUBSET', ...selector }] });
const SELECTOR = `${CLUSTER}.lb_subset_config.subset_selectors[0].fallback_keys_subset`;
const refreshRate = (b: Json, rate: Json) => {
  plain(b).type = 'STRICT_DNS';
  plain(b).dns_failure_refresh_rate = rate;
};

/** The spec's Errors table, each broken on its own. */
const INVALID: ReadonlyArray<{ readonly name: string; readonly change: (b: Json) => void; readonly error: string }> = [
  { name: 'unknown bootstrap field', change: (b) => (plain(b).colour = 'blue'), error: `${CLUSTER}.colour: unknown field` },
  { name: 'ring_hash_lb_config without RING_HASH', change: (b) => (plain(b).ring_hash_lb_config = {}), error: `${CLUSTER}.ring_hash_lb_config: requires lb_policy RING_HASH, but lb_policy is ROUND_ROBIN` },
  { name: 'least_request_lb_config without LEAST_REQUEST', change: (b) => (plain(b).least_request_lb_config = {}), error: `${CLUSTER}.least_request_lb_config: requires lb_policy LEAST_REQUEST, but lb_policy is ROUND_ROBIN` },
  { name: 'type and cluster_type', change: (b) => (plain(b).cluster_type = { name: 'custom' }), error: `${CLUSTER}: only one of type, cluster_type may be set` },
  {
    name: 'zone_aware_lb_config and locality_weighted_lb_config',
    change: (b) => (plain(b).common_lb_config = { zone_aware_lb_config: {}, locality_weighted_lb_config: {} }),
    error: `${CLUSTER}.common_lb_config: only one of zone_aware_lb_config, locality_weighted_lb_config may be set`,
  },
  {
    name: 'two of ring_hash, original_dst, least_request lb configs',
    change: (b) => Object.assign(plain(b), { ring_hash_lb_config: {}, original_dst_lb_config: {} }),
    error: `${CLUSTER}: only one of ring_hash_lb_config, original_dst_lb_config may be set`,
  },
  { name: 'fallback_keys_subset empty', change: (b) => subset(b, {}), error: `${SELECTOR}: fallback_keys_subset cannot be empty` },
  { name: 'fallback_keys_subset equal to keys', change: (b) => subset(b, { fallback_keys_subset: ['b', 'a'] }), error: `${SELECTOR}: fallback_keys_subset cannot be equal to keys` },
  {
    name: 'fallback_keys_subset with another fallback_policy',
    change: (b) => subset(b, { fallback_policy: 'DEFAULT_SUBSET', fallback_keys_subset: ['a'] }),
    error: `${SELECTOR}: fallback_keys_subset can be set only for KEYS_SUBSET fallback_policy`,
  },
  { name: 'fallback_keys_subset not in keys', change: (b) => subset(b, { fallback_keys_subset: ['c'] }), error: `${SELECTOR}: fallback_keys_subset must be a subset of selector keys` },
  {
    name: 'RefreshRate base_interval not above zero',
    change: (b) => refreshRate(b, { base_interval: '0s' }),
    error: `${CLUSTER}.dns_failure_refresh_rate.base_interval: value must be greater than 1ms`,
  },
  {
    name: 'RefreshRate base_interval not below max_interval',
    change: (b) => refreshRate(b, { base_interval: '5s', max_interval: '5s' }),
    error: `${CLUSTER}.dns_failure_refresh_rate.base_interval: must be less than max_interval`,
  },
  {
    name: 'RefreshRate max_interval below base_interval',
    change: (b) => refreshRate(b, { base_interval: '5s', max_interval: '2s' }),
    error: `${CLUSTER}.dns_failure_refresh_rate.max_interval: must be greater than or equal to base_interval`,
  },
  {
    name: 'use_tcp_for_dns_lookups with the platform DNS runtime feature',
    change: (b) => {
      plain(b).use_tcp_for_dns_lookups = true;
      b.layered_runtime = { layers: [{ name: 'static', static_layer: { 'proxy.restart_features.use_platform_api_for_dns_lookups': true } }] };
    },
    error: `${CLUSTER}.use_tcp_for_dns_lookups: TCP for DNS lookups cannot be used while runtime proxy.restart_features.use_platform_api_for_dns_lookups is true (the platform API uses UDP only); remove use_tcp_for_dns_lookups or turn the feature off`,
  },
  // Envoy's load-time checks of the cluster types this build serves.
  { name: 'dns_refresh_rate below 1 ms', change: (b) => Object.assign(plain(b), { type: 'STRICT_DNS', dns_refresh_rate: '0s' }), error: `${CLUSTER}.dns_refresh_rate: value must be greater than or equal to 1ms` },
  {
    name: 'LOGICAL_DNS with two endpoints',
    change: (b) => {
      plain(b).type = 'LOGICAL_DNS';
      plain(b).load_assignment.endpoints[0].lb_endpoints.push({ endpoint: { address: { socket_address: { address: 'b.internal', port_value: 80 } } } });
    },
    error: `${CLUSTER}.load_assignment: LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint`,
  },
  {
    name: 'STATIC with a hostname',
    change: (b) => (plain(b).load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address = 'backend.internal'),
    error: `${CLUSTER}.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address: malformed IP address: backend.internal`,
  },
  { name: 'eds_cluster_config on a STATIC cluster', change: (b) => (plain(b).eds_cluster_config = { service_name: 's' }), error: `${CLUSTER}.eds_cluster_config: eds_cluster_config set in a non-EDS cluster` },
  {
    name: 'minimum_ring_size above maximum_ring_size',
    change: (b) => Object.assign(plain(b), { lb_policy: 'RING_HASH', ring_hash_lb_config: { minimum_ring_size: 4096, maximum_ring_size: 2048 } }),
    error: `${CLUSTER}.ring_hash_lb_config.minimum_ring_size: ring hash: minimum_ring_size (4096) > maximum_ring_size (2048)`,
  },
  {
    name: 'ORIGINAL_DST with another lb_policy',
    change: (b) => {
      delete plain(b).load_assignment;
      Object.assign(plain(b), { type: 'ORIGINAL_DST', lb_policy: 'RING_HASH' });
    },
    error: `${CLUSTER}.lb_policy: cluster: LB policy RING_HASH is not valid for Cluster type ORIGINAL_DST. Only 'CLUSTER_PROVIDED' or 'ORIGINAL_DST_LB' is allowed with cluster type 'ORIGINAL_DST'`,
  },
  {
    name: 'ORIGINAL_DST with a load_assignment',
    change: (b) => Object.assign(plain(b), { type: 'ORIGINAL_DST', lb_policy: 'CLUSTER_PROVIDED' }),
    error: `${CLUSTER}.load_assignment: ORIGINAL_DST clusters must have no load assignment or hosts configured`,
  },
  { name: 'duplicate cluster name', change: (b) => b.static_resources.clusters.push(structuredClone(plain(b))), error: "static_resources.clusters[2].name: cluster manager: duplicate cluster 'plain'" },
];

test('each invalid example of the spec\'s Errors table: exit 1 naming the problem', { timeout: 60000 }, async () => {
  const results = await mapLimited(INVALID, 2, (row) => {
    const config = servableV3('/dev/null');
    row.change(config);
    const configPath = path.join(dir, `${row.name.replace(/\W+/g, '_')}.json`);
    fs.writeFileSync(configPath, JSON.stringify(config));
    return runToExit(['-c', configPath, '--mode', 'validate']).then((result) => ({ ...result, configPath }));
  });
  INVALID.forEach((row, i) => {
    const { code, stdout, stderr, configPath } = results[i]!;
    assert.equal(code, 1, row.name);
    assert.equal(stdout, '', row.name);
    const line = `[critical][main] [src/cli/run.ts:`;
    assert.ok(stderr.includes(line), `${row.name}: ${stderr}`);
    assert.ok(stderr.trimEnd().endsWith(`error initializing configuration '${configPath}': ${configPath}: ${row.error}`), `${row.name}: ${stderr}`);
  });
});

test('ORIGINAL_DST with v2\'s ORIGINAL_DST_LB validates, warning that it is deprecated', { timeout: 20000 }, async () => {
  const config = servableV3('/dev/null');
  delete plain(config).load_assignment;
  Object.assign(plain(config), { type: 'ORIGINAL_DST', lb_policy: 'ORIGINAL_DST_LB', original_dst_lb_config: { use_http_header: true } });
  const configPath = path.join(dir, 'original_dst_lb.json');
  fs.writeFileSync(configPath, JSON.stringify(config));
  const result = await runToExit(['-c', configPath, '--mode', 'validate']);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, `configuration '${configPath}' OK\n`);
  assert.match(result.stderr, /\[warning\].* static_resources\.clusters\[1\]\.lb_policy: ORIGINAL_DST_LB is deprecated, use CLUSTER_PROVIDED instead\n/);
});

// Shapes that fuzzing --mode validate found crashing or exhausting the proxy. Each is refused in
// one line naming the file and the field or the limit, never with a stack trace, in bounded time
// (runToExit's timeout) and memory (a heap far below the gigabytes they used to take).
const BOUNDED = { env: { NODE_OPTIONS: '--max-old-space-size=256' }, timeoutMs: 30_000 };
const DEEP = 10_000;
const TCP = 'static_resources.listeners[0].filter_chains[0].filters[0]';
const ROUTE = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route';
const TOO_DEEP = 'nesting deeper than 100 levels (limit)';
const PROTOBUF_TOO_DEEP = 'messages nested deeper than 100 levels (limit)';

/** 444 bytes of YAML that stand for 10^9 strings under node.metadata. */
function billionLaughs(): string {
  const lol = (i: number) => (i === 0 ? Array(10).fill('lol') : Array(10).fill(`*lol${i - 1}`)).join(', ');
  return `node:\n  id: laughs\n  metadata:\n${Array.from({ length: 9 }, (_, i) => `    lol${i}: &lol${i} [${lol(i)}]\n`).join('')}`;
}

/** node.metadata as a Struct nested DEEP times, written field by field (protobufjs refuses to encode it). */
function deepBinary(): Uint8Array {
  const schema = protoSchema();
  const fieldNumber = (type: protobuf.Type, name: string) => type.fields[name]!.id;
  const lengthDelimited = (field: number, bytes: Uint8Array) => protobuf.Writer.create().uint32((field << 3) | 2).bytes(bytes).finish();
  // A map entry is a message of key (1) and value (2).
  const entryKey = protobuf.Writer.create().uint32((1 << 3) | 2).string('a').finish();
  const structValue = fieldNumber(schema.root.lookupType('google.protobuf.Value'), 'structValue');
  const structFields = fieldNumber(schema.root.lookupType('google.protobuf.Struct'), 'fields');
  let struct: Uint8Array = new Uint8Array();
  for (let i = 0; i < DEEP; i++) {
    struct = lengthDelimited(structFields, Buffer.concat([entryKey, lengthDelimited(2, lengthDelimited(structValue, struct))]));
  }
  const node = lengthDelimited(fieldNumber(schema.root.lookupType('envoy.config.core.v3.Node'), 'metadata'), struct);
  return lengthDelimited(fieldNumber(schema.bootstrap, 'node'), node);
}

/** A servable bootstrap whose tcp_proxy stat_prefix, inside the typed_config Any, is not UTF-8. */
function invalidUtf8InAny(): Uint8Array {
  const marker = 'STAT_PREFIX_TO_CORRUPT';
  const config = servableV3('/dev/null');
  config.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.stat_prefix = marker;
  const type = protoSchema().bootstrap;
  const bytes = Buffer.from(type.encode(protojson.fromJson(type, config)).finish());
  const at = bytes.indexOf(marker);
  assert.ok(at > 0);
  bytes[at] = 0xff;
  bytes[at + 1] = 0xfe;
  return bytes;
}

function withServable(change: (b: Json) => void): string {
  const config = servableV3('/dev/null');
  change(config);
  return JSON.stringify(config);
}

interface Hostile {
  readonly name: string;
  /** The file to write in `dir`, and its contents; absent for --config-yaml. */
  readonly file?: readonly [string, () => string | Uint8Array];
  readonly configYaml?: () => string;
  /** What follows `<source>: ` in the error line. */
  readonly reason: string | RegExp;
}

const HOSTILE: readonly Hostile[] = [
  { name: 'billion laughs', file: ['laughs.yaml', billionLaughs], reason: 'node.metadata.lol5[7]: YAML aliases expand to more than 1000000 values (limit)' },
  {
    name: `JSON ${DEEP} deep`,
    file: ['deep.json', () => `{"node":{"metadata":${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}}}`],
    reason: `node.metadata${'.a'.repeat(98)}: ${TOO_DEEP}`,
  },
  {
    name: `YAML ${DEEP} deep`,
    file: ['deep.yaml', () => `node:\n  metadata: ${'{a: '.repeat(DEEP)}1${'}'.repeat(DEEP)}\n`],
    reason: new RegExp(`^YAML ${TOO_DEEP.replace(/[()]/g, '\\$&')} at line 2, column \\d+$`),
  },
  {
    name: `pb_text ${DEEP} deep`,
    file: ['deep.pb_text', () => `node { metadata { ${'fields { key: "a" value { struct_value { '.repeat(DEEP)}${'} } } '.repeat(DEEP)}} }`],
    reason: `text format error at line 1: ${PROTOBUF_TOO_DEEP}`,
  },
  { name: `pb ${DEEP} deep`, file: ['deep.pb', deepBinary], reason: `not a binary envoy.config.bootstrap.v3.Bootstrap: ${PROTOBUF_TOO_DEEP}` },
  {
    name: 'pb with invalid UTF-8 in a typed_config string',
    file: ['utf8.pb', invalidUtf8InAny],
    reason: `${TCP}.typed_config: not a binary envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy: The encoded data was not valid for encoding utf-8`,
  },
  {
    name: 'negative route timeout',
    file: ['route_timeout.json', () => withServable((b) => (b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route.timeout = '-5s'))],
    reason: `${ROUTE}.timeout: must not be negative, got -5s`,
  },
  {
    name: 'connect_timeout 0s',
    file: ['connect_timeout.yaml', () => withServable((b) => (b.static_resources.clusters[0].connect_timeout = '0s'))],
    reason: 'static_resources.clusters[0].connect_timeout: value must be greater than 0s',
  },
  {
    name: `--config-yaml ${DEEP} deep`,
    configYaml: () => `[${'['.repeat(DEEP)}${']'.repeat(DEEP)}]`,
    reason: `YAML ${TOO_DEEP} at line 1, column 102`,
  },
];

function hostileArgs(row: Hostile): { argv: string[]; configPath: string; source: string } {
  if (row.file === undefined) return { argv: ['--config-yaml', row.configYaml!()], configPath: '', source: '--config-yaml' };
  const [name, contents] = row.file;
  const configPath = path.join(dir, name);
  fs.writeFileSync(configPath, contents());
  return { argv: ['-c', configPath], configPath, source: configPath };
}

/** Exit 1, nothing on stdout, and on stderr one line that names the source and the reason. */
function assertRefused(row: Hostile, result: Exited, configPath: string, source: string): void {
  assert.equal(result.code, 1, `${row.name}: ${result.stderr}`);
  assert.equal(result.stdout, '', row.name);
  assert.doesNotMatch(result.stderr, /^\s+at /m, `${row.name}: a stack trace`);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${row.name}: ${result.stderr}`);
  const prefix = `error initializing configuration '${configPath}': ${source}: `;
  const at = lines[0]!.indexOf(prefix);
  assert.ok(at >= 0, `${row.name}: ${lines[0]}`);
  const reason = lines[0]!.slice(at + prefix.length);
  if (typeof row.reason === 'string') assert.equal(reason, row.reason, row.name);
  else assert.match(reason, row.reason, row.name);
}

test('fuzzing shapes: one line naming the file and the field or limit, exit 1, bounded', { timeout: 120_000 }, async () => {
  const runs = HOSTILE.map((row) => ({ row, ...hostileArgs(row) }));
  const results = await mapLimited(runs, 2, (run) => runToExit([...run.argv, '--mode', 'validate'], BOUNDED));
  runs.forEach((run, i) => assertRefused(run.row, results[i]!, run.configPath, run.source));
});

test('a 32 Mi character cluster name is refused at its field, quickly and in little memory', { timeout: 60_000 }, async () => {
  const results = await mapLimited(['long_name.yaml', 'long_name.pb'], 2, async (name) => {
    const config = servableV3('/dev/null');
    config.static_resources.clusters[1].name = 'a'.repeat(32 * 1024 * 1024);
    const configPath = path.join(dir, name);
    const type = protoSchema().bootstrap;
    fs.writeFileSync(configPath, name.endsWith('.pb') ? type.encode(protojson.fromJson(type, config)).finish() : JSON.stringify(config));
    const started = process.hrtime.bigint();
    const result = await runToExit(['-c', configPath, '--mode', 'validate'], BOUNDED);
    return { configPath, result, ms: Number(process.hrtime.bigint() - started) / 1e6 };
  });
  for (const { configPath, result, ms } of results) {
    const row = { name: configPath, reason: 'static_resources.clusters[1].name: a string of 33554432 characters, longer than 4194304 (limit)' };
    assertRefused(row, result, configPath, configPath);
    // It took 21 s and 2.2 GB at 64 Mi; bounded loosely, the machine being shared.
    assert.ok(ms < 5000, `${configPath}: ${ms} ms`);
  }
});

test('a file over 64 MiB is refused before it is read', { timeout: 30_000 }, async () => {
  const configPath = path.join(dir, 'huge.yaml');
  // Sparse: a gigabyte that takes no disk, and that the bounded heap could not hold.
  fs.writeFileSync(configPath, '');
  fs.truncateSync(configPath, 1024 * 1024 * 1024);
  try {
    const started = process.hrtime.bigint();
    const result = await runToExit(['-c', configPath, '--mode', 'validate'], BOUNDED);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assertRefused({ name: 'huge file', reason: 'file of 1073741824 bytes, larger than 67108864 (limit)' }, result, configPath, configPath);
    assert.ok(ms < 5000, `${ms} ms`);
  } finally {
    fs.rmSync(configPath);
  }
});

test('serving refuses the same shapes with the same line', { timeout: 60_000 }, async () => {
  const runs = HOSTILE.slice(0, 2).map((row) => ({ row, ...hostileArgs(row) }));
  const results = await mapLimited(runs, 2, (run) => runToExit([...run.argv, '--disable-hot-restart'], BOUNDED));
  runs.forEach((run, i) => assertRefused(run.row, results[i]!, run.configPath, run.source));
});

test('bin/proxy run as an executable starts Node without NODE_EXTRA_CA_CERTS, which no TLS of the proxy uses', { timeout: 30_000 }, () => {
  // Node warns at start when the file cannot be read: the warning shows whether it read the variable.
  const env = { ...process.env, NODE_EXTRA_CA_CERTS: path.join(dir, 'no-such-bundle.pem') };
  const args = ['--mode', 'validate', '-c', path.join(__dirname, '..', '..', '..', 'configs', 'default.yaml')];
  const direct = spawnSync(PROXY_BIN, args, { env, encoding: 'utf8', timeout: 20_000 });
  assert.equal(direct.status, 0, direct.stderr);
  assert.doesNotMatch(direct.stderr, /extra certs/);
  // The check can fail: through `node bin/proxy` the #! line is not read, and Node reads the file.
  const throughNode = spawnSync(process.execPath, [PROXY_BIN, ...args], { env, encoding: 'utf8', timeout: 20_000 });
  assert.equal(throughNode.status, 0, throughNode.stderr);
  assert.match(throughNode.stderr, /Ignoring extra certs from `.*no-such-bundle\.pem`/);
});
