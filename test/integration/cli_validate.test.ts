// --mode validate: the whole bootstrap checked, nothing opened (ports, shared memory, hot
// restart sockets), `configuration '<path>' OK` and exit 0, or the problem and exit 1.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { servableV3 } from '../helpers/cli_bootstraps';
import type { Json } from '../helpers/config_fixtures';
import { mapLimited, runToExit } from '../helpers/cli_runs';
import { makeTempDir } from '../helpers/proxy_process';

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
    const baseId = 100_000 + (process.pid % 100_000);
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
  { name: 'fallback_keys_subset not in keys', change: (b) => subset(b, { fallback_keys_subset: ['c'] }), error: `${SELECTOR}: fallback_keys_subset must be a subset of selector keys` },
  {
    name: 'RefreshRate base_interval not above zero',
    change: (b) => refreshRate(b, { base_interval: '0s' }),
    error: `${CLUSTER}.dns_failure_refresh_rate.base_interval: must be greater than zero`,
  },
  {
    name: 'RefreshRate base_interval not below max_interval',
    change: (b) => refreshRate(b, { base_interval: '5s', max_interval: '5s' }),
    error: `${CLUSTER}.dns_failure_refresh_rate.base_interval: must be less than max_interval`,
  },
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
    const line = `[critical][main] [src/cli/main.ts:`;
    assert.ok(stderr.includes(line), `${row.name}: ${stderr}`);
    assert.ok(stderr.trimEnd().endsWith(`error initializing configuration '${configPath}': ${configPath}: ${row.error}`), `${row.name}: ${stderr}`);
  });
});
