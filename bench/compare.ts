// `make bench-compare BASE=<rev>`: the A/B instrument for data-path changes. Builds BASE in a
// temporary git worktree, then measures the CPU per request of BASE's proxy and of this
// checkout's (HEAD) on the L7 13-byte, L7 16 KiB and L4 rows of `make bench` (COMPARE_ROWS picks some, or the HTTP/2 row), round after round
// in alternating order, and prints both and their ratio. Each proxy runs from its own build's
// bin/proxy on the same bootstrap file. Ctrl-C stops everything and removes the worktree.

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUILD_NAMES, buildOrder, compareRounds, type Build, type RoundPair } from './ab_summary';
import { formatComparison, type ComparedRow } from './ab_table';
import { CompareUsageError, parseCompareArgs, readCompareSettings, type CompareSettings } from './compare_settings';
import { describePinning } from './cpu_pinning';
import { runMain } from './interrupt';
import { H2_STREAMS, measureService, type LoadGenerator, type Measurement } from './measure';
import { planRows, planServices, type Layer, type Row, type Selection } from './plan';
import { addWorktree, buildWorktree, describeCommit, resolveCommit } from './revision_build';
import { startProxy, writeProxyLaunch, type ProxyLaunch, type RunningService } from './services';
import { startBenchUpstream, withSession, type Session } from './session';
import { BenchSettingsError, type LoadSettings } from './settings';
import { roundCpuUsPerRequest, type Round } from './summary';
import { firstLine, formatCount, formatFailures } from './table';
import { makeCertificate } from './tls_certificate';

const REPO_ROOT = resolve(__dirname, '..', '..');


/** Each build's run of a row in each round, or why it failed. */
type Runs = Map<Row, Record<Build, (Round | { readonly error: string })[]>>;

/** The commits BASE and (with COMPARE_HEAD) HEAD are built from; HEAD null: this checkout. */
type Commits = Record<Build, string | null> & { readonly base: string };

function commitOf(revision: string): string {
  const commit = resolveCommit(REPO_ROOT, revision);
  if (commit === null) throw new CompareUsageError(`unknown revision '${revision}': git knows no commit of that name here`);
  return commit;
}

async function main(): Promise<number> {
  let request: { commits: Commits; settings: CompareSettings };
  try {
    const revision = parseCompareArgs(process.argv.slice(2));
    const settings = readCompareSettings(process.env);
    const commits = { base: commitOf(revision), head: settings.headRevision === null ? null : commitOf(settings.headRevision) };
    request = { commits, settings };
  } catch (error) {
    if (!(error instanceof CompareUsageError || error instanceof BenchSettingsError)) throw error;
    console.error(`bench-compare: ${error.message}`);
    return 2;
  }
  const startedAt = Date.now();
  try {
    const compared: Selection = { subjects: new Set(['proxy']), groups: new Set(request.settings.rows) };
    return await withSession((session) => compareWithBase(session, request.commits, request.settings, planRows(compared)));
  } finally {
    console.log(`total runtime: ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  }
}

async function compareWithBase(session: Session, commits: Commits, settings: CompareSettings, rows: readonly Row[]): Promise<number> {
  const { processes, interrupted } = session;
  const worktrees = { base: addWorktree(REPO_ROOT, commits.base), head: commits.head === null ? null : addWorktree(REPO_ROOT, commits.head) };
  // A second Ctrl-C exits without unwinding; the worktrees go then too.
  const removeAtExit = (): void => {
    worktrees.base.remove();
    worktrees.head?.remove();
  };
  process.once('exit', removeAtExit);
  try {
    for (const build of ['base', 'head'] as const) {
      const worktree = worktrees[build];
      if (worktree === null) continue;
      console.log(`building ${BUILD_NAMES[build]} ${describeCommit(REPO_ROOT, commits[build] as string)} in ${worktree.path}`);
      try {
        await buildWorktree(processes, REPO_ROOT, worktree, (step) => console.log(`  ${step}`));
      } catch (error) {
        // A step stopped by Ctrl-C fails; the interruption is what to report.
        interrupted.throwIfAborted();
        throw error;
      }
    }
    const roots: Record<Build, string> = { base: worktrees.base.path, head: worktrees.head?.path ?? REPO_ROOT };
    printPreamble(session, settings, roots, rows);
    const runs = await measureRounds(session, settings, roots, rows);
    const compared = rows.map((row) => compareRow(row, runs, session.ticksPerSecond));
    console.log(`\n${formatComparison(settings.rounds, compared)}`);
    const failures = compared.flatMap(({ label, outcome }) => (outcome.kind === 'failed' ? [{ row: label, error: outcome.error }] : []));
    if (failures.length > 0) console.log(`\n${formatFailures(failures)}`);
    return failures.length > 0 ? 1 : 0;
  } finally {
    // The proxies run from the worktrees: they stop before those go.
    await processes.stopAll();
    removeAtExit();
    process.removeListener('exit', removeAtExit);
  }
}

async function measureRounds(session: Session, settings: CompareSettings, roots: Record<Build, string>, rows: readonly Row[]): Promise<Runs> {
  const { processes, interrupted, pinning } = session;
  const upstreamPort = await startBenchUpstream(session);
  const services = planServices(rows);
  // One bootstrap file per layer, written once: both builds serve the very same configuration,
  // unless HEAD's alone is to write an access log or route through a large table.
  const launches = new Map<Layer, Record<Build, ProxyLaunch>>();
  const certificate = services.some((service) => service.layer === 'tls') ? makeCertificate(session.runDir) : null;
  for (const service of services) {
    const dir = join(session.runDir, `proxy-${service.layer}`);
    const base = await writeProxyLaunch(dir, 'proxy', service.layer, upstreamPort, certificate);
    const headDir = join(session.runDir, `proxy-${service.layer}-variant`);
    const variant = { ...(settings.headAccessLog ? { accessLogPath: join(headDir, 'access.log') } : {}), routeCount: settings.headRoutes, httpFilters: settings.headFilters };
    const head = settings.headAccessLog || settings.headRoutes > 1 || settings.headFilters.length > 0 ? await writeProxyLaunch(headDir, 'proxy', service.layer, upstreamPort, certificate, variant) : base;
    launches.set(service.layer, { base, head });
  }
  const load: LoadGenerator = { processes, settings: settings.load, cpu: pinning?.loadCpu ?? null, runDir: session.runDir };
  const runs: Runs = new Map(rows.map((row) => [row, { base: [], head: [] }]));
  for (let round = 0; round < settings.rounds; round++) {
    for (const service of services) {
      const layerLaunches = launches.get(service.layer) as Record<Build, ProxyLaunch>;
      for (const row of service.rows) {
        for (const build of buildOrder(round)) {
          const launch = layerLaunches[build];
          // A fresh proxy of this build for each row, on the same bootstrap file as the other
          // build's: a row measured after another ran on code the JIT shaped for the other's
          // bodies, which moved the 16 KiB row by up to a third between identical builds.
          const start = (): Promise<RunningService> =>
            startProxy(processes, launch, roots[build], pinning?.proxyCpu ?? null, `${BUILD_NAMES[build]} ${launch.label}`);
          const measured = await measureService(load, 1, start, [row]);
          // Runs cut short by the interruption are not results.
          interrupted.throwIfAborted();
          for (const measurement of measured) {
            runs.get(measurement.row)?.[build].push(measurement.kind === 'measured' ? (measurement.rounds[0] as Round) : { error: measurement.error });
            printProgress(round, settings.rounds, build, measurement, session.ticksPerSecond);
          }
        }
      }
    }
  }
  return runs;
}

function compareRow(row: Row, runs: Runs, ticksPerSecond: number): ComparedRow {
  const label = row.group.id;
  const { base, head } = runs.get(row) as Record<Build, (Round | { readonly error: string })[]>;
  const failure = [...base, ...head].find((run): run is { error: string } => 'error' in run);
  if (failure) return { label, outcome: { kind: 'failed', error: failure.error } };
  const pairs = base.map((run, index): RoundPair => ({ base: run as Round, head: head[index] as Round }));
  try {
    return { label, outcome: { kind: 'compared', comparison: compareRounds(pairs, ticksPerSecond) } };
  } catch (error) {
    return { label, outcome: { kind: 'failed', error: (error as Error).message } };
  }
}

function printPreamble(session: Session, settings: CompareSettings, roots: Record<Build, string>, rows: readonly Row[]): void {
  for (const build of ['base', 'head'] as const) {
    console.log(`${BUILD_NAMES[build]}: ${describeBuild(roots[build])}`);
  }
  const { load, rounds } = settings;
  const seconds = rounds * 2 * rows.length * (load.warmupSeconds + load.durationSeconds);
  console.log(
    `rows: ${rows.map((row) => row.group.id).join(', ')}; ${loadGenerators(rows, load)}; ` +
      `${rounds} round${rounds === 1 ? '' : 's'}, each running every row on BASE and HEAD (BASE first in odd rounds, HEAD first in even ones) ` +
      `each row on a freshly started proxy with a ${load.warmupSeconds} s warm-up and ${load.durationSeconds} s measured ` +
      `(at least ${seconds < 120 ? `${seconds} s` : `${Math.floor(seconds / 60)} min`})`,
  );
  if (settings.headAccessLog) console.log('HEAD writes a file access log (the default format) on every row; BASE writes none');
  if (settings.headFilters.length > 0) console.log(`HEAD's L7 rows run ${settings.headFilters.join(', ')} (acting on no request) before the router; BASE's the router alone`);
  if (settings.headRoutes > 1) console.log(`HEAD's L7 rows route through ${settings.headRoutes} routes, the last one matching; BASE's through one`);
  console.log(describePinning(session.pinning));
}

/** The load generators the rows run, as their command lines read. */
function loadGenerators(rows: readonly Row[], load: LoadSettings): string {
  const generators = new Set(rows.map((row) => row.group.load));
  return [
    ...(generators.has('wrk') ? [`wrk -t${load.threads} -c${load.connections}`] : []),
    ...(generators.has('h2load') ? [`h2load -c${load.connections} -m${H2_STREAMS}`] : []),
  ].join(', ');
}

/** What a build's dist/ was compiled from, as its build info records it. */
function describeBuild(root: string): string {
  const info = JSON.parse(readFileSync(join(root, 'dist', 'build_info.json'), 'utf8')) as { revision: string; treeStatus: string };
  const changes = info.treeStatus === 'Modified' ? ' with uncommitted changes' : '';
  return `${describeCommit(REPO_ROOT, info.revision)}${changes} (${root})`;
}

function printProgress(round: number, rounds: number, build: Build, measurement: Measurement, ticksPerSecond: number): void {
  const prefix = `[round ${round + 1}/${rounds}] ${measurement.row.group.id} / ${BUILD_NAMES[build]}:`;
  if (measurement.kind === 'failed') {
    console.log(`${prefix} failed: ${firstLine(measurement.error)}`);
    return;
  }
  const [run] = measurement.rounds as [Round];
  const cpu = roundCpuUsPerRequest(run, ticksPerSecond);
  console.log(`${prefix} ${cpu === null ? '-' : cpu.toFixed(1)} us/req, ${formatCount(run.load.requestsPerSecond)} req/s`);
}

runMain('bench-compare', main);
