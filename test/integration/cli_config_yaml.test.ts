// --config-yaml over --config-path through the real binary: Envoy's MergeFrom, so the YAML's
// clusters and listeners join the file's, and its node fields replace the file's one by one;
// --mode validate judges the same merged bootstrap.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { servableV3 } from '../helpers/cli_bootstraps';
import { runToExit, startServing, stopServing } from '../helpers/cli_runs';
import { localCluster, tcpProxyListener } from '../helpers/config_fixtures';
import { makeTempDir } from '../helpers/proxy_process';

const OVERLAY = JSON.stringify({
  node: { id: 'from-yaml' },
  static_resources: { clusters: [localCluster('extra', 9)], listeners: [tcpProxyListener('extra_in', 0, 'extra')] },
});

function writeBootstrap(dir: string): string {
  const configPath = path.join(dir, 'bootstrap.yaml');
  fs.writeFileSync(configPath, JSON.stringify(servableV3(path.join(dir, 'admin_access.log'))));
  return configPath;
}

test('--config-yaml appends clusters and listeners to the file\'s and merges the node, serving and validating', { timeout: 60_000 }, async () => {
  const dir = makeTempDir();
  try {
    const configPath = writeBootstrap(dir);
    const args = ['-c', configPath, '--config-yaml', OVERLAY, '--disable-hot-restart', '--concurrency', '1'];
    const validated = await runToExit([...args, '--mode', 'validate']);
    assert.deepEqual(validated, { code: 0, stdout: `configuration '${configPath}' OK\n`, stderr: '' });

    const proxy = await startServing(args, { dir });
    try {
      const clusters = new Set([...(await proxy.get('/clusters')).matchAll(/^([\w-]+)::added_via_api::/gm)].map((match) => match[1]));
      assert.deepEqual([...clusters].sort(), ['extra', 'plain', 'secure']);
      const listeners = JSON.parse(await proxy.get('/listeners?format=json')) as { listener_statuses: { name: string }[] };
      assert.deepEqual(listeners.listener_statuses.map((listener) => listener.name).sort(), ['extra_in', 'http_in', 'tcp_in']);
      const info = JSON.parse(await proxy.get('/server_info?format=json'));
      assert.deepEqual([info.node.id, info.node.cluster, info.node.locality.zone], ['from-yaml', 'edge', 'eu-1a']);
    } finally {
      await stopServing(proxy);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('--mode validate judges the merged bootstrap: a YAML cluster named like one of the file\'s is a duplicate', { timeout: 30_000 }, async () => {
  const dir = makeTempDir();
  try {
    const configPath = writeBootstrap(dir);
    const overlay = JSON.stringify({ static_resources: { clusters: [localCluster('plain', 9)] } });
    const result = await runToExit(['-c', configPath, '--config-yaml', overlay, '--mode', 'validate']);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /static_resources\.clusters\[2\].*plain/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
