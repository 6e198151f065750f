// `make bench`: measures our proxy against the upstream alone, nginx and node-http-proxy under
// the same load, prints one table per group and writes the raw numbers to bench/results/.
// Everything it starts runs on loopback and is stopped before it exits, Ctrl-C included.

import { mkdirSync, writeFileSync } from 'node:fs';
import { release } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describePinning, readAllowedCpus, type Pinning } from './cpu_pinning';
import { runMain } from './interrupt';
import { measureService, type LoadGenerator, type Measurement } from './measure';
import { readNginxBuild } from './nginx';
import { GROUPS, planRows, planServices, type Row, type Subject } from './plan';
import { startService, type ServiceContext } from './services';
import { startBenchUpstream, withSession } from './session';
import { readSettings, type BenchSettings } from './settings';
import { ratiosTo, summarize, type Ratios, type Round, type RowSummary } from './summary';
import { firstLine, formatFailures, formatGroupTable, formatLatency, type TableRow } from './table';
import { formatTargets, judgeTargets } from './targets';
import { makeCertificate } from './tls_certificate';

/** A row as the table prints it and as the results file keeps it. */
type RowRecord = { readonly group: string; readonly subject: Subject; readonly label: string } & (
  | { readonly kind: 'measured'; readonly rounds: readonly Round[]; readonly summary: RowSummary; readonly ratios: Ratios }
  | { readonly kind: 'failed'; readonly error: string }
);

const REPO_ROOT = resolve(__dirname, '..', '..');

async function main(): Promise<number> {
  const startedAt = new Date();
  const settings = readSettings(process.env);
  const rows = planRows(settings.selection);
  try {
    return await withSession(async (session) => {
      const { processes, interrupted, runDir, pinning, ticksPerSecond } = session;
      printPreamble(settings, rows, pinning);
      const nginxBuild = readNginxBuild();
      const upstreamPort = await startBenchUpstream(session);
      const certificate = rows.some((row) => row.group.layer === 'tls') ? makeCertificate(runDir) : null;
      const context: ServiceContext = { processes, runDir, repoRoot: REPO_ROOT, pinning, nginxBuild, upstreamPort, certificate };
      const load: LoadGenerator = { processes, settings, cpu: pinning?.loadCpu ?? null, runDir };
      const measurements: Measurement[] = [];
      for (const service of planServices(rows)) {
        const measured = await measureService(load, settings.rounds, () => startService(context, service.subject, service.layer), service.rows);
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
    });
  } finally {
    console.log(`total runtime: ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)} s`);
  }
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
  console.log(describePinning(pinning));
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
  const measured = records.map((record) => ({
    group: record.group,
    subject: record.subject,
    cpuPerRequest: record.kind === 'measured' ? record.ratios.cpuPerRequest : null,
    p50Us: record.kind === 'measured' ? record.summary.p50Us : null,
    p99Us: record.kind === 'measured' ? record.summary.p99Us : null,
  }));
  console.log(`\n${formatTargets(judgeTargets(measured))}`);
}

function writeResults(startedAt: Date, report: object): string {
  const dir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  return path;
}

runMain('bench', main);
