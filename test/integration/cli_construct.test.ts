// What a worker cannot build is refused before anything runs: `--mode validate` and a start build
// the workers' clusters and filter chains from the model, and report each error once, with the
// field path, exit 1, and the same line in both modes; a refused start binds, maps and forks nothing.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { servableV3 } from '../helpers/cli_bootstraps';
import type { Json } from '../helpers/config_fixtures';
import { mapLimited, runToExit, type Exited } from '../helpers/cli_runs';
import { uniqueBaseId } from '../helpers/hot_restart_run';
import { makeTempDir } from '../helpers/proxy_process';

let dir = '';

before(() => {
  dir = makeTempDir();
});

after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const HTTP_LISTENER = 'static_resources.listeners[1]';
const HCM = `${HTTP_LISTENER}.filter_chains[0].filters[0].typed_config`;
const hcmOf = (b: Json): Json => b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config;
const virtualHost = (name: string, domains: string[]): Json => ({ name, domains, routes: [{ match: { prefix: '/' }, route: { cluster: 'plain' } }] });
const withHosts = (b: Json, ...hosts: Json[]) => (hcmOf(b).route_config.virtual_hosts = hosts);

/** Each construction error a validated configuration could still reach a worker with. */
const UNBUILDABLE: ReadonlyArray<{ readonly name: string; readonly change: (b: Json) => void; readonly error: string }> = [
  {
    name: 'two virtual hosts share a domain',
    change: (b) => withHosts(b, virtualHost('a', ['example.com']), virtualHost('b', ['other.com', 'Example.com'])),
    error: `${HCM}.route_config.virtual_hosts[1].domains[1]: Only unique values for domains are permitted. Duplicate entry of domain example.com in route local_route`,
  },
  {
    name: 'a wildcard domain twice in one virtual host',
    change: (b) => withHosts(b, virtualHost('a', ['*.example.com', '*.EXAMPLE.com'])),
    error: `${HCM}.route_config.virtual_hosts[0].domains[1]: Only unique values for domains are permitted. Duplicate entry of domain *.example.com in route local_route`,
  },
  {
    name: 'two default virtual hosts',
    change: (b) => withHosts(b, virtualHost('a', ['*']), virtualHost('b', ['*'])),
    error: `${HCM}.route_config.virtual_hosts[1].domains[0]: Only a single wildcard domain is permitted in route local_route`,
  },
  {
    name: 'a direct response body file that does not exist',
    change: (b) => (hcmOf(b).route_config.virtual_hosts = [{ name: 'a', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 503, body: { filename: '/nonexistent/maintenance.html' } } }] }]),
    error: `${HCM}.route_config.virtual_hosts[0].routes[0].direct_response.body.filename: cannot read '/nonexistent/maintenance.html': ENOENT`,
  },
  {
    name: 'two filter chains without a match',
    change: (b) => b.static_resources.listeners[1].filter_chains.push(b.static_resources.listeners[0].filter_chains[0]),
    error: `${HTTP_LISTENER}.filter_chains[1]: error adding listener '127.0.0.1:0': multiple filter chains with the same matching rules are defined`,
  },
];

function written(row: (typeof UNBUILDABLE)[number]): string {
  const config = servableV3('/dev/null');
  row.change(config);
  const configPath = path.join(dir, `${row.name.replace(/\W+/g, '_')}.json`);
  fs.writeFileSync(configPath, JSON.stringify(config));
  return configPath;
}

/** Exit 1, nothing on stdout, and the critical line naming the file, the field and Envoy's reason, once. */
function assertRefused(name: string, result: Exited, configPath: string, error: string): void {
  assert.equal(result.code, 1, `${name}: ${result.stderr}`);
  assert.equal(result.stdout, '', name);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${name}: ${result.stderr}`);
  assert.match(lines[0]!, /\[critical\]\[main\] \[src\/cli\/run\.ts:\d+\] /, name);
  assert.ok(lines[0]!.endsWith(`error initializing configuration '${configPath}': ${configPath}: ${error}`), `${name}: ${lines[0]}`);
}

test('--mode validate builds what the workers build: each unbuildable configuration exits 1 at its field', { timeout: 60_000 }, async () => {
  const runs = UNBUILDABLE.map((row) => ({ row, configPath: written(row) }));
  const results = await mapLimited(runs, 2, (run) => runToExit(['-c', run.configPath, '--mode', 'validate']));
  runs.forEach((run, i) => assertRefused(run.row.name, results[i]!, run.configPath, run.row.error));
});

test('serving refuses the same configurations with the same line, before a region, a socket or a worker start exists', { timeout: 60_000 }, async () => {
  const runs = UNBUILDABLE.map((row) => ({ row, configPath: written(row), baseId: uniqueBaseId(), addressPath: path.join(dir, `admin.${row.name.replace(/\W+/g, '_')}`) }));
  const results = await mapLimited(runs, 2, (run) =>
    runToExit(['-c', run.configPath, '--base-id', String(run.baseId), '--concurrency', '2', '--admin-address-path', run.addressPath]),
  );
  runs.forEach((run, i) => {
    assertRefused(run.row.name, results[i]!, run.configPath, run.row.error);
    // The supervisor's start (region, hot restart socket, admin, the workers' init) never began.
    assert.ok(!fs.existsSync(`/dev/shm/proxy_shared_memory_${run.baseId * 10}`), `${run.row.name}: a shared memory region`);
    assert.ok(!fs.existsSync(run.addressPath), `${run.row.name}: an admin listener`);
    assert.doesNotMatch(results[i]!.stderr, /worker|initializing epoch/, run.row.name);
  });
});
