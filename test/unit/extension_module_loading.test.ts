// What a process loads to know the extensions: a worker imports every filter's descriptor to find
// the factories its listeners name, and start-up time is mostly module loading, so a descriptor's
// runtime (and protobufjs, and the DNS resolver) loads only when a configuration uses it. Each
// check runs in a fresh node, whose module cache holds what the import alone loaded.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';

const DIST_SRC = path.join(__dirname, '..', '..', 'src');

/** The modules a fresh node has loaded after running `script` (which may `require(src(...))`), relative to dist/src or node_modules. */
function modulesLoadedBy(script: string): string[] {
  const program = `const src = (p) => require(${JSON.stringify(DIST_SRC)} + '/' + p); ${script}; process.stdout.write(JSON.stringify(Object.keys(require.cache)))`;
  const loaded = JSON.parse(execFileSync(process.execPath, ['-e', program], { encoding: 'utf8', timeout: 10_000 })) as string[];
  return loaded.map((file) => (file.startsWith(DIST_SRC) ? path.relative(DIST_SRC, file) : file.replace(/.*node_modules\//, 'node_modules/')));
}

/** Runtime modules that only a configuration using them should load. */
const RUNTIMES = [
  'filters/http/ext_authz.js',
  'filters/http/ext_authz_client.js',
  'filters/http/fault.js',
  'filters/http/ratelimit.js',
  'filters/http/compressor.js',
  'filters/http/grpc_web.js',
  'filters/network/tcp_proxy.js',
  'filters/network/http_connection_manager/factory.js',
  'tracing/zipkin/zipkin_tracer.js',
  'overload/fixed_heap_monitor.js',
  'stats/sinks/udp_statsd_sink.js',
  'stats/sinks/metrics_service_sink.js',
  'upstream/supervisor/dns/dns_discovery.js',
];

test('the registry and the workers\' factories load no extension runtime, no protobufjs and no DNS resolver', { timeout: 20_000 }, () => {
  const loaded = modulesLoadedBy(
    "src('extensions/builtin_extensions').builtinExtensions(); src('extensions/data_plane_extensions').dataPlaneFactories()",
  );
  assert.ok(loaded.includes('extensions/http/ext_authz.js'), 'the descriptors themselves are loaded');
  assert.deepEqual(loaded.filter((file) => RUNTIMES.includes(file)), []);
  assert.deepEqual(loaded.filter((file) => file.startsWith('node_modules/protobufjs/')), []);
});

test('a factory loads its runtime when called, and the schema loads protobufjs', { timeout: 20_000 }, () => {
  const loaded = modulesLoadedBy(
    "const monitor = src('extensions/data_plane_extensions').dataPlaneFactories().resourceMonitors.get('proxy.resource_monitors.fixed_heap')({ kind: 'fixed_heap', name: 'proxy.resource_monitors.fixed_heap', maxHeapSizeBytes: 1024 });" +
      "if (typeof monitor.read !== 'function') throw new Error('not a monitor');" +
      "src('config/schema').protoSchema()",
  );
  assert.ok(loaded.includes('overload/fixed_heap_monitor.js'));
  assert.ok(loaded.includes('node_modules/protobufjs/light.js'));
});
