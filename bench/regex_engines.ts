// Which linear-time regex engine src/regex/safe_regex.ts should wrap: compile time, and search
// time over 300,000 stat-like names, for each candidate npm package that is installed, with V8's
// backtracking RegExp as the reference. Candidates that are not dependencies can be measured from
// a scratch install through NODE_PATH. Each row runs in a worker thread that is terminated when
// it outlives the budget, since one backtracking test can take hours and cannot be interrupted
// from its own thread. V8 compiles a RegExp at its first test: its compile column is the
// constructor alone.
//
//   node dist/bench/regex_engines.js
//   NODE_PATH=/tmp/x/node_modules node dist/bench/regex_engines.js   (REGEX_BENCH_BUDGET_MS=20000)

import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

import { footprint, packageRootOf } from './package_footprint';
import { median } from './summary';

interface Compiled {
  test(input: string): boolean;
}

interface Candidate {
  readonly label: string;
  /** The npm package, or null for the engine built into Node. */
  readonly pkg: string | null;
  compile(module: unknown, pattern: string): Compiled;
}

type Ctor = new (pattern: string, flags?: string) => Compiled;

const CANDIDATES: readonly Candidate[] = [
  {
    label: 're2js (pure JS)',
    pkg: 're2js',
    compile: (m, p) => (m as { RE2JS: { compile(p: string): Compiled } }).RE2JS.compile(p),
  },
  { label: 're2 (native)', pkg: 're2', compile: (m, p) => new (m as Ctor)(p) },
  { label: 're2-wasm', pkg: 're2-wasm', compile: (m, p) => new (m as { RE2: Ctor }).RE2(p, 'u') },
  { label: 'RegExp (V8, backtracking)', pkg: null, compile: (_m, p) => new RegExp(p) },
];

const PATTERNS = ['upstream_rq', '^cluster\\.c12.*_5xx$', '(?i)UPSTREAM_RQ_5XX', '(\\w+)+!', '(a|aa)*b'];

const COMPILE_ROUNDS = 200;
const PROGRESS_EVERY = 1_000;
/** The fastest pass counts: the first one warms the JIT, and neighbours only slow a pass down. */
const SEARCH_PASSES = 3;

const CLUSTER_STATS = [
  'upstream_rq_200', 'upstream_rq_2xx', 'upstream_rq_503', 'upstream_rq_5xx', 'upstream_rq_total',
  'upstream_rq_active', 'upstream_rq_timeout', 'upstream_rq_retry', 'upstream_rq_cancelled',
  'upstream_rq_pending_active', 'upstream_rq_pending_total', 'upstream_cx_total', 'upstream_cx_active',
  'upstream_cx_connect_fail', 'upstream_cx_destroy', 'upstream_cx_destroy_local', 'upstream_cx_destroy_remote',
  'upstream_cx_rx_bytes_total', 'upstream_cx_tx_bytes_total', 'upstream_flow_control_paused_reading_total',
  'membership_healthy', 'membership_total', 'lb_healthy_panic', 'max_host_weight', 'version',
];
const HTTP_STATS = ['downstream_rq_1xx', 'downstream_rq_2xx', 'downstream_rq_3xx', 'downstream_rq_4xx', 'downstream_rq_5xx',
  'downstream_rq_total', 'downstream_rq_active', 'downstream_cx_total', 'downstream_cx_active', 'no_route'];
const LISTENER_STATS = ['downstream_cx_total', 'downstream_cx_active', 'downstream_cx_destroy', 'no_filter_chain_match',
  'downstream_pre_cx_active'];

/** 250,000 cluster, 20,000 http and 30,000 listener names: the shapes Envoy's /stats lists. */
function statNames(): string[] {
  const names: string[] = [];
  for (let c = 0; c < 10_000; c++) for (const s of CLUSTER_STATS) names.push(`cluster.c${c}.${s}`);
  for (let h = 0; h < 2_000; h++) for (const s of HTTP_STATS) names.push(`http.ingress_http_${h}.${s}`);
  for (let l = 0; l < 6_000; l++) for (const s of LISTENER_STATS) names.push(`listener.127.0.0.1_${10_000 + l}.${s}`);
  return names;
}

function loadModule(pkg: string): unknown | null {
  try {
    return require(pkg) as unknown;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && (e as Error).message.includes(`'${pkg}'`)) return null;
    throw e;
  }
}

/** Microseconds per compile, the median of COMPILE_ROUNDS. */
function compileMicros(candidate: Candidate, module: unknown, pattern: string): number {
  const samples: number[] = [];
  for (let i = 0; i < COMPILE_ROUNDS; i++) {
    const start = performance.now();
    candidate.compile(module, pattern);
    samples.push((performance.now() - start) * 1000);
  }
  return median(samples);
}

interface RowJob {
  readonly candidate: number;
  readonly pattern: string;
}

type RowMessage =
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'progress'; readonly searched: number }
  | { readonly kind: 'done'; readonly compileUs: number; readonly searchMs: number; readonly nsPerName: number; readonly matches: number };

/** Worker side: one engine, one pattern, reported through the parent port. */
function measureRow({ candidate: index, pattern }: RowJob, post: (m: RowMessage) => void): void {
  const candidate = CANDIDATES[index] as Candidate;
  const module = candidate.pkg === null ? null : loadModule(candidate.pkg);
  let re: Compiled;
  try {
    re = candidate.compile(module, pattern);
  } catch (e) {
    post({ kind: 'refused', reason: (e as Error).message.split('\n')[0] as string });
    return;
  }
  const compileUs = compileMicros(candidate, module, pattern);
  const names = statNames();
  let searchMs = Infinity;
  let matches = 0;
  for (let pass = 0; pass < SEARCH_PASSES; pass++) {
    matches = 0;
    const start = performance.now();
    for (let i = 0; i < names.length; i++) {
      if (re.test(names[i] as string)) matches++;
      if (i % PROGRESS_EVERY === 0) post({ kind: 'progress', searched: i });
    }
    searchMs = Math.min(searchMs, performance.now() - start);
  }
  post({ kind: 'done', compileUs, searchMs, nsPerName: (searchMs * 1e6) / names.length, matches });
}

/** Main side: the row's cells, or why it has none. */
function runRow(job: RowJob, budgetMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: job });
    let searched = 0;
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve([`did not finish in ${budgetMs / 1000} s (${searched} names searched)`]);
    }, budgetMs);
    worker.on('message', (m: RowMessage) => {
      if (m.kind === 'progress') {
        searched = m.searched;
        return;
      }
      clearTimeout(timer);
      void worker.terminate();
      if (m.kind === 'refused') resolve([`refused: ${m.reason}`]);
      else resolve([m.compileUs.toFixed(1), m.searchMs.toFixed(0), m.nsPerName.toFixed(0), String(m.matches)]);
    });
    worker.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

function row(cells: readonly string[], widths: readonly number[]): string {
  return cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
}

async function main(): Promise<void> {
  const budgetMs = Number(process.env.REGEX_BENCH_BUDGET_MS ?? 20_000);
  console.log(
    `${statNames().length} names; compile = median of ${COMPILE_ROUNDS}; search = fastest of ${SEARCH_PASSES} passes; ` +
      `each row may take ${budgetMs / 1000} s`,
  );
  const widths = [26, 22, 10, 10, 8, 8];
  console.log(row(['engine', 'pattern', 'compile us', 'search ms', 'ns/name', 'matches'], widths));
  for (const [index, candidate] of CANDIDATES.entries()) {
    if (candidate.pkg !== null) {
      if (loadModule(candidate.pkg) === null) {
        console.log(row([candidate.label, 'not installed'], widths));
        continue;
      }
      const f = footprint(packageRootOf(require.resolve(candidate.pkg), candidate.pkg));
      console.log(`${candidate.label}: ${candidate.pkg}@${f.version}, ${f.packages} package(s), ${(f.bytes / 1e6).toFixed(1)} MB on disk`);
    }
    for (const pattern of PATTERNS) {
      const cells = await runRow({ candidate: index, pattern }, budgetMs);
      console.log(cells.length === 1 ? `${row([candidate.label, pattern], widths)}  ${cells[0]}` : row([candidate.label, pattern, ...cells], widths));
    }
  }
}

if (isMainThread) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
} else {
  measureRow(workerData as RowJob, (m) => parentPort?.postMessage(m));
}
