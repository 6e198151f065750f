// `make bench`'s `--concurrency 2` target: the proxy row's configuration (route and router, 13 B)
// at --concurrency 1, then 2 with the workers sharing the listen socket, then 2 with the
// listener's reuse_port, under the same wrk load, each process's CPU read over every round, and
// the capacity of each (bench/worker_scaling_report.ts) compared against at least 1.7x.
// The proxy is not pinned: its workers take whichever CPUs the load leaves, each its own on a
// machine with CPUs to spare; on two CPUs one of them shares the load's.
//
//   node dist/bench/worker_scaling.js        (part of `make bench`; BENCH_DURATION as `make bench`)

import { join, resolve } from 'node:path';
import { runMain } from './interrupt';
import { SMALL_PATH } from './plan';
import { readProcessTree } from './proc_cpu';
import { stat } from './proxy_probes';
import { type ProxyLaunch, startProxy, writeProxyLaunch } from './services';
import { startBenchUpstream, withSession, type Session } from './session';
import { readLoadSettings } from './settings';
import { formatScalingReport, type ScalingRound, type ScalingRun } from './worker_scaling_report';
import { runWrk } from './wrk';

const REPO_ROOT = resolve(__dirname, '..', '..');
const ROUNDS = 3;

interface Sample {
  /** CPU ticks so far of the supervisor and of each of its workers, by pid. */
  readonly supervisor: number;
  readonly workers: ReadonlyMap<number, number>;
  /** Connections each worker has accepted, by worker index. */
  readonly connections: readonly number[];
}

async function sample(supervisorPid: number, launch: ProxyLaunch, concurrency: number): Promise<Sample> {
  const listener = `listener.127.0.0.1_${launch.port}`;
  const connections = await Promise.all(Array.from({ length: concurrency }, (_, i) => stat(launch.adminPort, `${listener}.worker_${i}.downstream_cx_total`).then((count) => count ?? 0)));
  const tree = readProcessTree(supervisorPid);
  const workers = new Map(tree.filter((proc) => proc.ppid === supervisorPid).map((proc) => [proc.pid, proc.cpuTicks]));
  return { supervisor: tree[0]!.cpuTicks, workers, connections };
}

async function measure(session: Session, upstreamPort: number, concurrency: number, reusePort: boolean): Promise<ScalingRun> {
  const settings = readLoadSettings(process.env);
  const name = `proxy-${concurrency}${reusePort ? '-reuse-port' : ''}`;
  const launch = await writeProxyLaunch(join(session.runDir, name), 'proxy', 'http', upstreamPort, null, { reusePort });
  const proxy = await startProxy(session.processes, launch, REPO_ROOT, null, `proxy --concurrency ${concurrency}${reusePort ? ' reuse_port' : ''}`, concurrency);
  const pid = proxy.process!.pid;
  const load = (durationSeconds: number) =>
    runWrk(session.processes, {
      url: `http://127.0.0.1:${launch.port}${SMALL_PATH}`,
      connections: settings.connections,
      threads: settings.threads,
      durationSeconds,
      cpu: session.pinning?.loadCpu ?? null,
    });
  try {
    await load(settings.warmupSeconds);
    const rounds: ScalingRound[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const before = await sample(pid, launch, concurrency);
      const result = await load(settings.durationSeconds);
      const after = await sample(pid, launch, concurrency);
      const share = (ticks: number): number => ticks / session.ticksPerSecond / (result.durationUs / 1e6);
      const workers = [...after.workers].map(([worker, ticks]) => {
        const start = before.workers.get(worker);
        if (start === undefined) throw new Error(`worker ${worker} of the proxy at --concurrency ${concurrency} started during a round`);
        return share(ticks - start);
      });
      const connections = after.connections.map((count, i) => count - before.connections[i]!);
      rounds.push({ requestsPerSecond: result.requestsPerSecond, supervisor: share(after.supervisor - before.supervisor), workers, connections });
    }
    return { concurrency, reusePort, rounds };
  } finally {
    await session.processes.stop(proxy.process!);
  }
}

async function main(): Promise<number> {
  return withSession(async (session) => {
    const upstreamPort = await startBenchUpstream(session);
    const one = await measure(session, upstreamPort, 1, false);
    const shared = await measure(session, upstreamPort, 2, false);
    const reusePort = await measure(session, upstreamPort, 2, true);
    const placement = session.pinning
      ? `the proxy on any CPU, wrk and the upstream on CPU ${session.pinning.loadCpu}`
      : 'one CPU shared by everything';
    process.stdout.write(`${formatScalingReport(one, shared, reusePort, placement)}\n`);
    return 0;
  });
}

runMain('worker scaling', main);
