// --mode validate on the compressor, gzip, buffer, grpc_web and grpc_http1_bridge filters: a
// bootstrap with all five is OK, and what serving would refuse is refused here at its field path.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { servableV3 } from '../helpers/cli_bootstraps';
import type { Json } from '../helpers/config_fixtures';
import { mapLimited, runToExit } from '../helpers/cli_runs';
import { makeTempDir } from '../helpers/proxy_process';

const FILTERS = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters';

let dir = '';

before(() => {
  dir = makeTempDir();
});

after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function withFilters(change: (filters: Json[]) => void): Json {
  const config = servableV3('/dev/null');
  const hcm = config.static_resources.listeners[1].filter_chains[0].filters[0].typed_config;
  const filters: Json[] = [
    {
      name: 'envoy.filters.http.compressor',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.compressor.v3.Compressor',
        compressor_library: { name: 'lib', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.compression.gzip.compressor.v3.Gzip', window_bits: 15 } },
      },
    },
    { name: 'envoy.filters.http.gzip', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.gzip.v3.Gzip', compressor: { content_length: 64 } } },
    { name: 'envoy.filters.http.buffer', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer', max_request_bytes: 65536 } },
    { name: 'envoy.filters.http.grpc_web' },
    { name: 'envoy.filters.http.grpc_http1_bridge' },
  ];
  change(filters);
  hcm.http_filters = [...filters, ...hcm.http_filters];
  return config;
}

const RUNS: readonly { name: string; change: (filters: Json[]) => void; error: string | null }[] = [
  { name: 'all five', change: () => {}, error: null },
  {
    name: 'brotli',
    change: (f) => (f[0].typed_config.compressor_library.typed_config = { '@type': 'type.googleapis.com/envoy.extensions.compression.brotli.compressor.v3.Brotli' }),
    error: `${FILTERS}[0].typed_config.compressor_library.typed_config.@type: unknown type 'type.googleapis.com/envoy.extensions.compression.brotli.compressor.v3.Brotli'`,
  },
  { name: 'no max_request_bytes', change: (f) => delete f[2].typed_config.max_request_bytes, error: `${FILTERS}[2].typed_config.max_request_bytes: value is required` },
];

test('--mode validate: OK with the five filters, and their refusals by field path', { timeout: 60_000 }, async () => {
  const results = await mapLimited(RUNS, 2, (run) => {
    const configPath = path.join(dir, `${run.name.replace(/\W+/g, '_')}.json`);
    fs.writeFileSync(configPath, JSON.stringify(withFilters(run.change)));
    return runToExit(['-c', configPath, '--mode', 'validate']).then((result) => ({ ...result, configPath }));
  });
  RUNS.forEach((run, i) => {
    const { code, stdout, stderr, configPath } = results[i]!;
    if (run.error === null) {
      assert.equal(code, 0, `${run.name}: ${stderr}`);
      assert.equal(stdout, `configuration '${configPath}' OK\n`);
      return;
    }
    assert.equal(code, 1, run.name);
    assert.ok(stderr.trimEnd().endsWith(`error initializing configuration '${configPath}': ${configPath}: ${run.error}`), `${run.name}: ${stderr}`);
  });
});
