// The xDS demo of `make xds-demo`: scripts/xds-demo-server.js (bound to free ports, its listeners
// on ports the proxy picks, a phase every 500 ms) and the proxy with two workers on
// configs/xds-demo.yaml, its ports rewritten to free ones. Listener `ingress` comes from LDS, and
// listener `canary` comes and goes with the phases. Traffic follows the demo's changes over
// HTTP/1.1 (a new connection each request) and over one h2c session: phase 2 sends everything to
// cluster green (upstream b), phase 0 to blue, whose one endpoint then is upstream a. The server
// logs the proxy's ACKs and no NACK. The config passes --mode validate as it is.

import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as yaml from 'js-yaml';
import { giveUpAfter, PROXY_BIN, request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const ROOT = path.resolve(__dirname, '..', '..', '..');

interface DemoServer {
  readonly child: ChildProcess;
  readonly port: number;
  /** Everything it printed so far. */
  output(): string;
}

async function startDemoServer(): Promise<DemoServer> {
  const args = ['--port', '0', '--interval-ms', '500', '--listener-ports', '0,0'];
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts', 'xds-demo-server.js'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  child.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const port = await waitFor('the demo server to print its port', () => {
    if (child.exitCode !== null) throw new Error(`the demo server exited with ${child.exitCode}: ${printed}`);
    const found = /management server on 127\.0\.0\.1:(\d+)/.exec(printed);
    return found ? Number(found[1]) : undefined;
  });
  return { child, port, output: () => printed };
}

/** The parts of configs/xds-demo.yaml the test rewrites. */
interface Addressed {
  address: { socket_address: { port_value: number } };
}
interface DemoConfig {
  admin?: unknown;
  static_resources: { clusters: { name: string; load_assignment: { endpoints: { lb_endpoints: { endpoint: Addressed }[] }[] } }[] };
}

/** configs/xds-demo.yaml with the management server at `xdsPort` and the admin on a free port. */
function demoBootstrap(xdsPort: number): Record<string, unknown> {
  const config = yaml.load(fs.readFileSync(path.join(ROOT, 'configs', 'xds-demo.yaml'), 'utf8')) as DemoConfig;
  delete config.admin;
  const xds = config.static_resources.clusters.find((c) => c.name === 'xds_cluster')!;
  xds.load_assignment.endpoints[0]!.lb_endpoints[0]!.endpoint.address.socket_address.port_value = xdsPort;
  return config as unknown as Record<string, unknown>;
}

interface Answer {
  readonly phase: string | undefined;
  readonly body: string;
}

/**
 * Asks until an answer of phase 2 and, after it, one of phase 0 from upstream a have come; every
 * phase-2 answer must come from upstream b (green alone, whose endpoint never changes).
 */
async function followPhases(ask: () => Promise<Answer>): Promise<void> {
  const phase2: string[] = [];
  await waitFor(
    'phase 2 (green: upstream b), then phase 0 (blue: upstream a)',
    async () => {
      const answer = await ask();
      if (answer.phase === '2') phase2.push(answer.body);
      return phase2.length > 0 && answer.phase === '0' && answer.body === 'upstream a\n' ? true : undefined;
    },
    20_000,
  );
  assert.deepEqual(new Set(phase2), new Set(['upstream b\n']), 'phase 2 routes everything to green');
}

test('configs/xds-demo.yaml passes --mode validate', TIMEOUT, async () => {
  const config = path.join(ROOT, 'configs', 'xds-demo.yaml');
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, [PROXY_BIN, '--mode', 'validate', '-c', config], { timeout: 30_000 }, (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))),
  );
  assert.equal(stdout, `configuration '${config}' OK\n`);
});

describe('the xDS demo (scripts/xds-demo-server.js, configs/xds-demo.yaml)', TIMEOUT, () => {
  let server: DemoServer;
  let proxy: RunningProxy;
  let port: number;

  before(async () => {
    server = await startDemoServer();
    proxy = await startProxy(demoBootstrap(server.port), ['--concurrency', '2']);
    port = await proxy.listenerPort('ingress');
  });

  after(async () => {
    await proxy?.cleanup();
    if (server?.child.exitCode === null) {
      const exited = new Promise((r) => server.child.once('exit', r));
      server.child.kill('SIGTERM');
      await Promise.race([exited, giveUpAfter(5000)]);
      server.child.kill('SIGKILL');
    }
  });

  test('HTTP/1.1: traffic follows the route weights and the endpoints the server shifts', TIMEOUT, async () => {
    await followPhases(async () => {
      const r = await request(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } });
      return { phase: r.status === 200 ? (r.headers['x-demo-phase'] as string | undefined) : `status ${r.status}`, body: r.body };
    });
  });

  test('h2c: one session follows them too', TIMEOUT, async () => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
    try {
      await followPhases(
        () =>
          new Promise<Answer>((resolve, reject) => {
            const stream = session.request({ ':path': '/' });
            let phase: string | undefined;
            const chunks: Buffer[] = [];
            stream.on('response', (headers) => {
              phase = headers[':status'] === 200 ? (headers['x-demo-phase'] as string | undefined) : `status ${String(headers[':status'])}`;
            });
            stream.on('data', (c: Buffer) => chunks.push(c));
            stream.on('end', () => resolve({ phase, body: Buffer.concat(chunks).toString() }));
            stream.on('error', reject);
            stream.setTimeout(10_000, () => {
              stream.close(http2.constants.NGHTTP2_CANCEL);
              reject(new Error('h2c request timed out'));
            });
          }),
      );
      assert.equal(session.closed || session.destroyed, false, 'the session stays open across the changes');
    } finally {
      session.close();
    }
  });

  test('listener ingress comes from LDS, and canary comes and goes', TIMEOUT, async () => {
    const dump = JSON.parse((await proxy.admin('/config_dump')).body) as { configs: { '@type': string; dynamic_listeners?: { name: string; active_state?: { version_info: string } }[] }[] };
    const listeners = dump.configs.find((c) => c['@type'].endsWith('.ListenersConfigDump'));
    const ingress = listeners?.dynamic_listeners?.find((l) => l.name === 'ingress');
    assert.ok(ingress?.active_state?.version_info, `ingress among the dynamic listeners: ${JSON.stringify(listeners)}`);
    const listed = async () => (await proxy.admin('/listeners')).body.split('\n').some((line) => line.startsWith('canary::'));
    await waitFor('canary listed', async () => ((await listed()) ? true : undefined), 20_000);
    await waitFor('canary gone', async () => ((await listed()) ? undefined : true), 20_000);
  });

  test('the server logs each push acknowledged, and no NACK', TIMEOUT, async () => {
    const output = server.output();
    const acked = (type: string) => new Set([...output.matchAll(new RegExp(`<- ACK  ${type} version (\\d+)\\n`, 'g'))].map((m) => m[1]));
    assert.equal(acked('CDS').size, 1, 'the clusters never change');
    for (const type of ['LDS', 'EDS', 'RDS']) assert.ok(acked(type).size >= 2, `${type}: versions acknowledged ${[...acked(type)].join(', ')}`);
    assert.doesNotMatch(output, /NACK/);
  });
});
