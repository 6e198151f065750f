// How long the proxy takes to validate a config, to start on it, and to hot-restart with an idle
// old epoch, each against its target: --mode validate under 300 ms, a start to LIVE under 500 ms,
// a restart to serving under 1 s; the restart's own cost is its difference from a fresh start.
// bin/proxy runs as an operator runs it, an executable (its #! line applies). Loopback only,
// bounded, cleans up.
//
//   node dist/bench/hot_restart.js            (part of `make bench`; HOT_RESTART_ROUNDS=5)

import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { posixSharedMemory, sharedRegionName } from '../src/shared_memory/posix_shared_memory';
import { StatsRegion } from '../src/shared_memory/region';
import { freePort } from './free_port';
import { fetchOnce } from './http_probe';
import { median } from './summary';
import { proxyBootstrapYaml } from './proxy_config';

const PROXY_BIN = path.resolve(__dirname, '..', '..', 'bin', 'proxy');
const START_TIMEOUT_MS = 20_000;

/** Milliseconds from spawn until `epoch` answers /ready 200 and reports itself in /server_info. */
async function timeToServe(child: ChildProcess, adminPort: number, epoch: number, started: number): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`epoch ${epoch} exited with ${child.exitCode}`);
    try {
      const info = await fetchOnce(adminPort, '/server_info');
      const ready = await fetchOnce(adminPort, '/ready');
      if (ready.status === 200 && info.body.trim().split(' ')[5] === String(epoch)) return performance.now() - started;
    } catch {
      // Not listening yet (the parent's admin may just have closed).
    }
    if (performance.now() - started > START_TIMEOUT_MS) throw new Error(`epoch ${epoch} did not serve within ${START_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function main(): Promise<void> {
  const rounds = Number(process.env.HOT_RESTART_ROUNDS ?? 5);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-bench-hr-'));
  const upstream = http.createServer((_req, res) => res.end('Hello, World!'));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const upstreamPort = (upstream.address() as { port: number }).port;
  const [listenPort, adminPort] = [await freePort(), await freePort()];
  const config = path.join(dir, 'bootstrap.yaml');
  fs.writeFileSync(config, proxyBootstrapYaml({ layer: 'http', listenPort, upstreamPort, adminPort }));
  const baseId = 200_000 + (process.pid % 100_000);
  const children: ChildProcess[] = [];
  const launch = (epoch: number) => {
    const child = spawn(
      PROXY_BIN,
      ['-c', config, '--base-id', String(baseId), '--restart-epoch', String(epoch), '--concurrency', '1',
        '-l', 'error', '--drain-time-s', '1', '--parent-shutdown-time-s', '1'],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    children.push(child);
    return child;
  };
  try {
    // --mode validate of the same config, spawn to exit.
    const validations: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      const run = spawnSync(PROXY_BIN, ['--mode', 'validate', '-c', config], { stdio: 'ignore' });
      if (run.status !== 0) throw new Error(`--mode validate exited with ${run.status}`);
      validations.push(performance.now() - t0);
    }
    const fresh: number[] = [];
    const restarts: number[] = [];
    let started = performance.now();
    fresh.push(await timeToServe(launch(0), adminPort, 0, started));
    for (let epoch = 1; epoch <= rounds; epoch++) {
      // The old epoch is idle: its parent, if any, has been terminated.
      await new Promise((r) => setTimeout(r, 1500));
      started = performance.now();
      restarts.push(await timeToServe(launch(epoch), adminPort, epoch, started));
    }
    const through = await fetchOnce(listenPort, '/');
    if (through.body !== 'Hello, World!') throw new Error(`traffic after the restarts: ${through.status} ${through.body}`);
    const m = median(restarts);
    process.stdout.write(
      `\nstart-up and hot restart (idle old epoch, --concurrency 1, ${rounds} restarts)\n` +
        `  --mode validate:                median ${median(validations).toFixed(0)} ms (target: under 300 ms)\n` +
        `  fresh start of the same config: ${fresh[0]!.toFixed(0)} ms to LIVE (node start-up, config, workers; target: under 500 ms)\n` +
        `  hot restart, spawn to serving:  median ${m.toFixed(0)} ms  [${restarts.map((r) => r.toFixed(0)).join(', ')}] (target: under 1000 ms)\n` +
        `  cost of the handover itself:    ${(m - fresh[0]!).toFixed(0)} ms\n`,
    );
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    StatsRegion.unlinkStale(posixSharedMemory, sharedRegionName(baseId));
    upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: Error) => {
  process.stderr.write(`hot restart bench failed: ${e.message}\n`);
  process.exitCode = 1;
});
