// promtool (Debian's prometheus package, installed by scripts/install-test-deps.sh) as the judge
// of our exposition: `promtool check metrics` exits 1 on anything Prometheus cannot ingest and
// 3 when the text parses but has lint problems. Some lint follows from keeping Envoy's names,
// which scrapers and dashboards already know: Envoy 1.16 prints no HELP, adds no `_total` to
// counters, its names carry units such as `_ms` and `days`, and some counters end in `_count`
// (total_match_count). Those lines are expected; anything else promtool prints is a problem.

import { spawn } from 'node:child_process';

const EXPECTED_LINT = [
  / no help text$/,
  / counter metrics should have "_total" suffix$/,
  / non-counter metrics should not have "_total" suffix$/,
  / metric names should not contain abbreviated units$/,
  / non-histogram and non-summary metrics should not have "_count" suffix$/,
  / use base unit "seconds" instead of "days"$/,
];

export interface PromtoolVerdict {
  readonly code: number | null;
  /** Output lines other than the expected lint. */
  readonly problems: readonly string[];
  /** How many expected lint lines there were. */
  readonly lint: number;
}

/** Pipes `exposition` into `promtool check metrics`. */
export function checkMetrics(exposition: string): Promise<PromtoolVerdict> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'], timeout: 30_000 });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(e.code === 'ENOENT' ? new Error("promtool is not installed: `make test` installs Debian's prometheus package") : e),
    );
    child.on('close', (code) => {
      const lines = output.split('\n').filter((l) => l.trim() !== '');
      const problems = lines.filter((l) => !EXPECTED_LINT.some((re) => re.test(l)));
      resolve({ code, problems, lint: lines.length - problems.length });
    });
    child.stdin.end(exposition);
  });
}
