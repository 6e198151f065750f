// A request that resets its HTTP/1.1 stream from the response's own head or body callback (the
// router retrying a 503, the async client giving up a body too big to keep), when the rest of
// the response is already in the same read: nothing more reaches it, and the worker goes on
// (the response's end once found no stream and threw).

import assert from 'node:assert/strict';
import * as http from 'node:http';
import { test, type TestContext } from 'node:test';
import { SystemClock } from '../../src/common/clock';
import type { RequestEncoder, ResponseDecoder } from '../../src/http/codec';
import { RequestHead, type ResponseHead } from '../../src/http/message';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';
import { Cluster } from '../../src/upstream/worker/cluster';
import { silentConnectionLogs, silentLogger, staticCluster } from '../helpers/data_plane';
import { closeServer, listen } from '../helpers/http_peers';
import { staticSnapshots } from '../helpers/membership';
import { SecretStore } from '../../src/tls/secret_store';

async function clusterAnswering(t: TestContext, body: string): Promise<Cluster> {
  const server = http.createServer((_req, res) => {
    res.statusCode = 503;
    res.end(body);
  });
  const port = await listen(server);
  const store = createHeapStatsStore();
  const config = staticCluster('c', [{ port }]);
  const cluster = new Cluster(config, staticSnapshots([config], store.hosts)[0]!, {
    store,
    runtime: new LiveRuntime([]),
    random: () => 0,
    readBuffer: Buffer.alloc(65536),
    localLocality: null,
    log: silentLogger,
    connectionLogs: silentConnectionLogs, secrets: new SecretStore([]),
    reportsTables: true,
    onConsecutiveFailure: () => undefined,
    onHostsPicked: () => undefined,
    clock: new SystemClock(),
  });
  t.after(async () => {
    cluster.close();
    await closeServer(server);
  });
  return cluster;
}

/** Sends a GET whose decoder resets the stream at `when`; resolves with the callbacks it saw once the response had time to end. */
function resetAt(cluster: Cluster, when: 'head' | 'body'): Promise<string[]> {
  const events: string[] = [];
  let encoder: RequestEncoder | null = null;
  const decoder: ResponseDecoder = {
    onUpstreamHead: (head: ResponseHead) => {
      events.push(`head ${head.status}`);
      if (when === 'head') encoder!.resetStream();
    },
    onUpstreamBody: () => {
      events.push('body');
      if (when === 'body') encoder!.resetStream();
    },
    onUpstreamComplete: () => events.push('complete'),
    onUpstreamReset: (reason) => events.push(`reset ${reason}`),
    onUpstreamDrained: () => undefined,
    onUpstreamReadEnd: () => undefined,
  };
  const pool = cluster.httpPool(cluster.chooseHost(null)!, {}, 'DEFAULT', 'http1')!;
  pool.newStream(
    decoder,
    {
      onPoolReady: (ready) => {
        encoder = ready;
        const head = new RequestHead('GET', '/', false);
        head.authority = 'upstream';
        ready.encodeHeaders(head, true);
      },
      onPoolFailure: (reason) => events.push(`pool failure ${reason}`),
    },
    {},
  );
  return new Promise((resolve) => setTimeout(() => resolve(events), 200));
}

test('a reset from the head of a response without a body: no end follows', { timeout: 10_000 }, async (t) => {
  const cluster = await clusterAnswering(t, '');
  assert.deepEqual(await resetAt(cluster, 'head'), ['head 503']);
  // The connection is gone, the cluster serves on.
  assert.deepEqual(await resetAt(cluster, 'head'), ['head 503']);
});

test("a reset from a body's last chunk: no end follows", { timeout: 10_000 }, async (t) => {
  const cluster = await clusterAnswering(t, 'all of it');
  assert.deepEqual(await resetAt(cluster, 'body'), ['head 503', 'body']);
});
