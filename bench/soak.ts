// `make soak`: the proxy under Envoy's way of running it (scripts/hot-restarter and
// scripts/start-proxy.sh, --concurrency 2), its listener from LDS and its cluster from CDS
// (files), carrying half of what it can at most for SOAK_DURATION (default 10 minutes) while
// it is hot-restarted every 30 s, one of its workers is killed every 45 s, and every 10 s the
// runtime is modified and the CDS and LDS files change. Prints the failed requests (only a
// killed worker's in-flight ones are allowed), each process's RSS and descriptors over time,
// and the hot restarts' SIGHUP-to-serving times. Exit 1 when any other request failed.
// Requests not sent because 2,000 were already in flight are printed apart: the machine fell
// behind the rate for a while, which is no failure of the proxy.
//
//   make soak                         SOAK_DURATION=2m make soak (seconds or minutes: 90, 90s, 2m)

import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { dump } from 'js-yaml';
import { posixSharedMemory, sharedRegionName } from '../src/shared_memory/posix_shared_memory';
import { StatsRegion } from '../src/shared_memory/region';
import { freePort } from './free_port';
import { fetchOnce } from './http_probe';
import { runMain } from './interrupt';
import { readProcessTree } from './proc_cpu';
import { startBenchUpstream, withSession } from './session';
import { routeAllBenchListener } from './proxy_config';
import { parseDurationSeconds } from './settings';
import { PacedLoad, saturation } from './soak_load';
import { formatCurves, formatRestarts, type ProcessSample, type Sample, splitFailures } from './soak_report';

const REPO_ROOT = resolve(__dirname, '..', '..');
const WORKERS = 2;
const RESTART_EVERY_MS = 30_000;
const KILL_EVERY_MS = 45_000;
const UPDATE_EVERY_MS = 10_000;
const SAMPLE_EVERY_MS = 10_000;
/** A request failing this soon after a worker was killed was that worker's. */
const KILL_WINDOW_MS = 1_000;

const LISTENER_TYPE = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

/** Writes a discovery file as a control plane would: whole, by rename. */
function publish(path: string, version: number, resources: readonly object[]): void {
  writeFileSync(`${path}.tmp`, JSON.stringify({ version_info: String(version), resources }));
  renameSync(`${path}.tmp`, path);
}

/** The CDS cluster of the upstream; each version changes its connect_timeout, a field that takes effect. */
function cluster(upstreamPort: number, version: number): object {
  return {
    '@type': CLUSTER_TYPE,
    name: 'soak',
    type: 'STATIC',
    connect_timeout: `${1 + (version % 2)}s`,
    load_assignment: { cluster_name: 'soak', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }] },
  };
}

/** The LDS listener; each version changes a response header of its route, an in-place filter chain update. */
function listener(port: number, version: number): object {
  const routeConfig = { response_headers_to_add: [{ header: { key: 'x-soak-version', value: String(version) } }] };
  return { '@type': LISTENER_TYPE, ...routeAllBenchListener(port, 'soak', routeConfig), name: 'soak' };
}

function bootstrap(adminPort: number, lds: string, cds: string): string {
  const source = (path: string) => ({ path, resource_api_version: 'V3' });
  return dump({
    node: { id: 'soak', cluster: 'soak' },
    admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: adminPort } } },
    dynamic_resources: { lds_config: source(lds), cds_config: source(cds) },
  });
}

function kib(status: string, field: string): number {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
}

/** The proxy's processes under the restarter: each epoch's supervisor and its workers. */
function sampleProcesses(restarterPid: number, newestEpochPid: number | null): ProcessSample[] {
  const tree = readProcessTree(restarterPid);
  const supervisors = new Set(tree.filter((p) => p.ppid === restarterPid).map((p) => p.pid));
  const samples: ProcessSample[] = [];
  for (const p of tree) {
    const role = supervisors.has(p.pid) ? 'supervisor' : supervisors.has(p.ppid) ? 'worker' : null;
    if (role === null) continue;
    try {
      const status = readFileSync(`/proc/${p.pid}/status`, 'utf8');
      const epochPid = role === 'supervisor' ? p.pid : p.ppid;
      samples.push({ role, newest: epochPid === newestEpochPid, pid: p.pid, rssKiB: kib(status, 'VmRSS'), fds: readdirSync(`/proc/${p.pid}/fd`).length });
    } catch {
      // It exited between the scan and the read.
    }
  }
  return samples;
}

async function main(): Promise<number> {
  const durationMs = parseDurationSeconds(process.env.SOAK_DURATION ?? '10m', 'SOAK_DURATION') * 1000;
  return withSession(async (session) => {
    const upstreamPort = await startBenchUpstream(session);
    const [listenPort, adminPort] = [await freePort(), await freePort()];
    const [ldsPath, cdsPath, config] = ['lds.json', 'cds.json', 'bootstrap.yaml'].map((f) => join(session.runDir, f)) as [string, string, string];
    let version = 1;
    publish(cdsPath, version, [cluster(upstreamPort, version)]);
    publish(ldsPath, version, [listener(listenPort, version)]);
    writeFileSync(config, bootstrap(adminPort, ldsPath, cdsPath));

    // Envoy's way: the wrapper runs the start script at each epoch (scripts/start-proxy.sh reads these).
    const baseId = 300_000 + (process.pid % 100_000);
    const env = {
      PROXY_CONFIG: config,
      PROXY_BASE_ID: String(baseId),
      PROXY_SOCKET_PATH: `@proxy_soak_${process.pid}`,
      PROXY_CONCURRENCY: String(WORKERS),
      PROXY_DRAIN_TIME_S: '5',
      PROXY_PARENT_SHUTDOWN_TIME_S: '10',
      PROXY_LOG_LEVEL: 'warning',
    };
    // The wrapper and its epochs inherit this process's environment.
    Object.assign(process.env, env);
    const restarter = session.processes.spawn('hot-restarter', join(REPO_ROOT, 'scripts', 'hot-restarter'), [join(REPO_ROOT, 'scripts', 'start-proxy.sh')]);
    const servedEpochs = (): number => (restarter.stdout().match(/^epoch \d+ serves/gm) ?? []).length;
    const newestEpochPid = (): number | null => {
      const pids = [...restarter.stdout().matchAll(/^forked new child process with PID=(\d+)/gm)];
      return pids.length === 0 ? null : Number(pids[pids.length - 1]![1]);
    };
    const waitServed = async (count: number, what: string): Promise<void> => {
      const deadline = performance.now() + 60_000;
      while (servedEpochs() < count) {
        if (restarter.exitStatus() !== null) throw new Error(`the hot-restarter exited: ${restarter.stdout().slice(-2000)}${restarter.stderr().slice(-2000)}`);
        if (performance.now() > deadline) throw new Error(`${what}: no epoch served within 60 s`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await waitServed(1, 'the first epoch');
    await waitUntilAnswers(listenPort);

    const capacity = await saturation(listenPort, 64, 5_000);
    const rate = Math.max(1, Math.round(capacity / 2));
    console.log(`soak: ${durationMs / 1000} s at ${rate} req/s (half of the ${Math.round(capacity)} req/s measured at 64 concurrent), --concurrency ${WORKERS}`);
    console.log('  every 30 s a hot restart, every 45 s a worker killed, every 10 s /runtime_modify and new CDS and LDS files');

    const load = new PacedLoad(listenPort, rate);
    const samples: Sample[] = [];
    const restarts: number[] = [];
    const kills: number[] = [];
    let restartAsked = 0;
    load.start();
    const started = performance.now();
    let nextRestart = RESTART_EVERY_MS;
    let nextKill = KILL_EVERY_MS;
    let nextUpdate = UPDATE_EVERY_MS;
    let nextSample = 0;
    while (performance.now() - started < durationMs) {
      session.interrupted.throwIfAborted();
      const now = performance.now() - started;
      if (now >= nextSample) {
        samples.push({ atMs: now, processes: sampleProcesses(restarter.pid, newestEpochPid()) });
        nextSample += SAMPLE_EVERY_MS;
      }
      if (now >= nextUpdate) {
        version++;
        publish(cdsPath, version, [cluster(upstreamPort, version)]);
        publish(ldsPath, version, [listener(listenPort, version)]);
        await fetchOnce(adminPort, `/runtime_modify?soak.version=${version}`).catch(() => undefined);
        nextUpdate += UPDATE_EVERY_MS;
      }
      if (now >= nextKill) {
        const epoch = newestEpochPid();
        const worker = epoch === null ? undefined : readProcessTree(epoch).find((p) => p.ppid === epoch);
        if (worker !== undefined) {
          process.kill(worker.pid, 'SIGKILL');
          kills.push(load.elapsedMs());
        }
        nextKill += KILL_EVERY_MS;
      }
      if (now >= nextRestart) {
        const sighup = performance.now();
        restartAsked++;
        process.kill(restarter.pid, 'SIGHUP');
        await waitServed(restartAsked + 1, `hot restart ${restartAsked}`);
        restarts.push(performance.now() - sighup);
        nextRestart += RESTART_EVERY_MS;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await load.stop();
    samples.push({ atMs: performance.now() - started, processes: sampleProcesses(restarter.pid, newestEpochPid()) });

    await session.processes.stop(restarter);
    // The hot restart region outlives the last epoch, as Envoy's does: the soak's is removed.
    StatsRegion.unlinkStale(posixSharedMemory, sharedRegionName(baseId));
    const split = splitFailures(load.failures, kills, KILL_WINDOW_MS);
    console.log(`\nrequests: ${load.sent} sent, ${load.succeeded} answered 200, ${load.failures.length} failed`);
    // Not failures: the rate was more than the proxy (and whatever else runs here) could carry for a while.
    if (load.skipped > 0) console.log(`  ${load.skipped} not sent: ${load.maxInFlight} were in flight at the time`);
    console.log(`  failed within ${KILL_WINDOW_MS} ms of one of the ${kills.length} worker kills (allowed): ${split.afterKill}; any other: ${split.other}`);
    for (const [reason, count] of split.reasons) console.log(`    ${count} x ${reason}`);
    console.log(formatRestarts(restarts));
    console.log(`\n${formatCurves(samples, WORKERS)}`);
    return split.other === 0 ? 0 : 1;
  });
}

/** The listener answers (LDS may take a moment after the epoch says it serves). */
async function waitUntilAnswers(port: number): Promise<void> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    try {
      if ((await fetchOnce(port, '/')).status === 200) return;
    } catch {
      // Not yet.
    }
    if (performance.now() > deadline) throw new Error('the LDS listener did not answer within 30 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

runMain('soak', main);
