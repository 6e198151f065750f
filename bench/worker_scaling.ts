// `make bench`'s `--concurrency 2` target: the proxy row's configuration (route and router, 13 B)
// at --concurrency 1, and at 2 with the workers sharing the listen socket, with the listener's
// reuse_port, and with its exact_balance, under the same wrk load, each process's CPU read over
// every round, and the capacity of each (bench/worker_scaling_report.ts) compared against at
// least 1.7x. The four proxies run side by side and take their rounds in turn, so that the
// machine's drift over the minutes falls on all of them alike rather than on one.
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
import { formatScalingReport, type ScalingRound, type ScalingRun, type Spread, SPREADS } from './worker_scaling_report';
import { runWrk } from './wrk';

const REPO_ROOT = resolve(__dirname, '..', '..');
const ROUNDS = 5;

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

/** One of the proxies compared, serving until the session ends. */
interface Subject {
  readonly concurrency: number;
  readonly spread: Spread;
  readonly launch: ProxyLaunch;
  readonly pid: number;
  readonly rounds: ScalingRound[];
}

async function start(session: Session, upstreamPort: number, concurrency: number, spread: Spread): Promise<Subject> {
  const name = `proxy-${concurrency}-${spread.replace(' ', '-')}`;
  const variant = { reusePort: spread === 'reuse_port', exactBalance: spread === 'exact_balance' };
  const launch = await writeProxyLaunch(join(session.runDir, name), 'proxy', 'http', upstreamPort, null, variant);
  const proxy = await startProxy(session.processes, launch, REPO_ROOT, null, `proxy --concurrency ${concurrency}, ${spread}`, concurrency);
  return { concurrency, spread, launch, pid: proxy.process!.pid, rounds: [] };
}

function load(session: Session, subject: Subject, durationSeconds: number) {
  const settings = readLoadSettings(process.env);
  return runWrk(session.processes, {
    url: `http://127.0.0.1:${subject.launch.port}${SMALL_PATH}`,
    connections: settings.connections,
    threads: settings.threads,
    durationSeconds,
    cpu: session.pinning?.loadCpu ?? null,
  });
}

async function measureRound(session: Session, subject: Subject): Promise<ScalingRound> {
  const { concurrency, launch, pid } = subject;
  const before = await sample(pid, launch, concurrency);
  const result = await load(session, subject, readLoadSettings(process.env).durationSeconds);
  const after = await sample(pid, launch, concurrency);
  const share = (ticks: number): number => ticks / session.ticksPerSecond / (result.durationUs / 1e6);
  const workers = [...after.workers].map(([worker, ticks]) => {
    const begun = before.workers.get(worker);
    if (begun === undefined) throw new Error(`worker ${worker} of the proxy at --concurrency ${concurrency} started during a round`);
    return share(ticks - begun);
  });
  const connections = after.connections.map((count, i) => count - before.connections[i]!);
  return { requestsPerSecond: result.requestsPerSecond, supervisor: share(after.supervisor - before.supervisor), workers, connections };
}

async function main(): Promise<number> {
  return withSession(async (session) => {
    const upstreamPort = await startBenchUpstream(session);
    const subjects = [await start(session, upstreamPort, 1, 'shared socket')];
    for (const spread of SPREADS) subjects.push(await start(session, upstreamPort, 2, spread));
    const { warmupSeconds } = readLoadSettings(process.env);
    for (const subject of subjects) await load(session, subject, warmupSeconds);
    for (let round = 0; round < ROUNDS; round++) {
      for (const subject of subjects) subject.rounds.push(await measureRound(session, subject));
    }
    const [one, ...twos] = subjects.map(({ concurrency, spread, rounds }): ScalingRun => ({ concurrency, spread, rounds }));
    const placement = session.pinning
      ? `the proxy on any CPU, wrk and the upstream on CPU ${session.pinning.loadCpu}`
      : 'one CPU shared by everything';
    process.stdout.write(`${formatScalingReport(one!, twos, placement)}\n`);
    return 0;
  });
}

runMain('worker scaling', main);
