// `make bench`: measures our proxy against the upstream alone, nginx and node-http-proxy under
// the same load, prints one table per group and writes the raw numbers to bench/results/.
// Everything it starts runs on loopback and is stopped before it exits, Ctrl-C included.

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { constants, release, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { planPinning, readAllowedCpus, type Pinning } from './cpu_pinning';
import { freePort } from './free_port';
import { waitUntilServing } from './http_probe';
import { measureRow } from './measure';
import { readNginxBuild, startUpstream } from './nginx';
import { GROUPS, planRows, planServices, SMALL_BODY, SMALL_PATH, type Row, type Service, type Subject } from './plan';
import { clockTicksPerSecond } from './proc_cpu';
import { ProcessGroups } from './process_group';
import { START_TIMEOUT_MS, startService, type ServiceContext } from './services';
import { readSettings, type BenchSettings } from './settings';
import { ratiosTo, summarize, type Ratios, type Round, type RowSummary } from './summary';
import { firstLine, formatFailures, formatGroupTable, formatLatency, type TableRow } from './table';
import { makeCertificate } from './tls_certificate';

type Measurement = { readonly row: Row } & (
  | { readonly kind: 'measured'; readonly rounds: readonly Round[] }
  | { readonly kind: 'failed'; readonly error: string }
);

/** A row as the table prints it and as the results file keeps it. */
type RowRecord = { readonly group: string; readonly subject: Subject; readonly label: string } & (
  | { readonly kind: 'measured'; readonly rounds: readonly Round[]; readonly summary: RowSummary; readonly ratios: Ratios }
  | { readonly kind: 'failed'; readonly error: string }
);

const REPO_ROOT = resolve(__dirname, '..', '..');

class InterruptedError extends Error {
  override readonly name = 'InterruptedError';

  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
  }
}

/**
 * The first Ctrl-C (or SIGTERM) stops the processes gracefully, which cuts the running wrk
 * short, and makes the run unwind through its cleanup; a second one kills at once and exits.
 */
function onInterrupt(processes: ProcessGroups): AbortSignal {
  const interruption = new AbortController();
  const interrupt = (signal: NodeJS.Signals): void => {
    if (interruption.signal.aborted) {
      processes.killAllNow();
      process.exit(128 + constants.signals[signal]);
    }
    console.error(`\ninterrupted by ${signal}; stopping every process the benchmark started`);
    interruption.abort(new InterruptedError(signal));
    void processes.stopAll();
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  // Covers exits no one planned, such as an uncaught exception.
  process.once('exit', () => processes.killAllNow());
  return interruption.signal;
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const settings = readSettings(process.env);
  const rows = planRows(settings.selection);
  const processes = new ProcessGroups();
  const interrupted = onInterrupt(processes);
  const runDir = mkdtempSync(join(tmpdir(), 'proxy-bench-'));
  // nginx workers drop root privileges and must still read the upstream's 16 KiB file.
  chmodSync(runDir, 0o755);
  try {
    const pinning = planPinning(readAllowedCpus());
    printPreamble(settings, rows, pinning);
    const nginxBuild = readNginxBuild();
    const ticksPerSecond = clockTicksPerSecond();
    const upstreamPort = await freePort();
    const upstream = startUpstream(processes, join(runDir, 'upstream'), upstreamPort, pinning?.loadCpu ?? null);
    await waitUntilServing(upstream, { port: upstreamPort, path: SMALL_PATH, expectedBody: SMALL_BODY }, START_TIMEOUT_MS);

    const certificate = rows.some((row) => row.group.layer === 'tls') ? makeCertificate(runDir) : null;
    const context: ServiceContext = { processes, runDir, repoRoot: REPO_ROOT, pinning, nginxBuild, upstreamPort, certificate };
    const measurements: Measurement[] = [];
    for (const service of planServices(rows)) {
      const measured = await measureService(context, settings, service);
      // Rows cut short by the interruption are not results.
      interrupted.throwIfAborted();
      for (const measurement of measured) {
        measurements.push(measurement);
        printProgress(measurements.length, rows.length, measurement);
      }
    }

    const records = toRecords(measurements, ticksPerSecond);
    printTables(records);
    const resultsPath = writeResults(startedAt, {
      startedAt: startedAt.toISOString(),
      settings: { ...settings, selection: { subjects: [...settings.selection.subjects], groups: [...settings.selection.groups] } },
      machine: { node: process.version, kernel: release(), nginx: nginxBuild.version, allowedCpus: readAllowedCpus(), pinning, clockTicksPerSecond: ticksPerSecond },
      rows: records,
    });
    console.log(`\nraw results: ${relative(process.cwd(), resultsPath)}`);
    return records.some((record) => record.kind === 'failed') ? 1 : 0;
  } finally {
    await processes.stopAll();
    rmSync(runDir, { recursive: true, force: true });
    console.log(`total runtime: ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)} s`);
  }
}

/** A subject that fails to start fails its rows; the other subjects are still measured. */
async function measureService(context: ServiceContext, settings: BenchSettings, service: Service): Promise<Measurement[]> {
  let running;
  try {
    running = await startService(context, service.subject, service.layer);
  } catch (error) {
    return service.rows.map((row) => ({ row, kind: 'failed', error: (error as Error).message }));
  }
  const measurements: Measurement[] = [];
  try {
    for (const row of service.rows) {
      try {
        const rounds = await measureRow(context.processes, settings, context.pinning?.loadCpu ?? null, running, row);
        measurements.push({ row, kind: 'measured', rounds });
      } catch (error) {
        measurements.push({ row, kind: 'failed', error: (error as Error).message });
      }
    }
  } finally {
    if (running.process) await context.processes.stop(running.process);
  }
  return measurements;
}

function toRecords(measurements: readonly Measurement[], ticksPerSecond: number): RowRecord[] {
  const summarized = measurements.map((measurement) =>
    measurement.kind === 'measured' ? { ...measurement, summary: summarize(measurement.rounds, ticksPerSecond) } : measurement,
  );
  const nginxByGroup = new Map<string, RowSummary>();
  for (const entry of summarized) {
    if (entry.kind === 'measured' && entry.row.subject === 'nginx') nginxByGroup.set(entry.row.group.id, entry.summary);
  }
  return summarized.map((entry): RowRecord => {
    const identity = { group: entry.row.group.id, subject: entry.row.subject, label: entry.row.label };
    return entry.kind === 'failed'
      ? { ...identity, kind: 'failed', error: entry.error }
      : {
          ...identity,
          kind: 'measured',
          rounds: entry.rounds,
          summary: entry.summary,
          ratios: ratiosTo(entry.summary, nginxByGroup.get(entry.row.group.id) ?? null),
        };
  });
}

function printPreamble(settings: BenchSettings, rows: readonly Row[], pinning: Pinning | null): void {
  const seconds = rows.length * (settings.warmupSeconds + settings.rounds * settings.durationSeconds);
  console.log(
    `proxy benchmark: ${rows.length} row${rows.length === 1 ? '' : 's'}; wrk -t${settings.threads} -c${settings.connections} (h2load -c${settings.connections} -m10 for HTTP/2), ` +
      `${settings.rounds} rounds of ${settings.durationSeconds} s after a ${settings.warmupSeconds} s warm-up ` +
      `(at least ${seconds < 120 ? `${seconds} s` : `${Math.floor(seconds / 60)} min`})`,
  );
  console.log(
    pinning
      ? `CPU ${pinning.proxyCpu}: the proxy under test; CPU ${pinning.loadCpu}: wrk and the upstream`
      : 'note: only one CPU is available, so the proxy, wrk and the upstream share it and nothing is pinned; ' +
          'the numbers are not comparable with a two-CPU run',
  );
}

function printProgress(done: number, total: number, measurement: Measurement): void {
  const { row } = measurement;
  const prefix = `[${done}/${total}] ${row.group.id} / ${row.label}:`;
  if (measurement.kind === 'failed') {
    console.log(`${prefix} failed: ${firstLine(measurement.error)}`);
    return;
  }
  const rates = measurement.rounds.map((round) => Math.round(round.load.requestsPerSecond)).join(', ');
  const p99 = measurement.rounds.flatMap((round) => (round.load.latency === null ? [] : [formatLatency(round.load.latency.p99Us)])).join(', ');
  console.log(`${prefix} req/s ${rates}${p99 === '' ? '' : `; p99 ${p99}`}`);
}

function printTables(records: readonly RowRecord[]): void {
  for (const group of GROUPS) {
    const rows: TableRow[] = records
      .filter((record) => record.group === group.id)
      .map((record) => ({ label: record.label, outcome: record }));
    if (rows.length > 0) console.log(`\n${formatGroupTable(group.title, rows)}`);
  }
  const failures = records.flatMap((record) =>
    record.kind === 'failed' ? [{ row: `${record.group} / ${record.label}`, error: record.error }] : [],
  );
  if (failures.length > 0) console.log(`\n${formatFailures(failures)}`);
}

function writeResults(startedAt: Date, report: object): string {
  const dir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  return path;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof InterruptedError) {
      process.exitCode = 128 + constants.signals[error.signal];
      return;
    }
    console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
