// The fuzzers' shared driver: each surface gets inputs from a seeded random stream of its own
// per input (so input i of seed s is reproduced without running the i-1 before it), every
// regression input of its corpus, a time bound per input, and a check that the heap does not
// grow without bound. A finding is written under test-artifacts/fuzz/ to be kept in the corpus.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { seededRandom } from '../helpers/seeded_random';

/** One input: its bytes and its kind, which is the file extension it is kept under (`yaml`, `pb`, `bin`...). */
export interface FuzzInput {
  readonly kind: string;
  readonly bytes: Buffer;
}

export interface FuzzTarget {
  /** A new input from `random` (a stream of its own for this input). */
  generate(random: () => number): FuzzInput;
  /** Runs one input through the code under test; throws when that code broke its contract. */
  run(input: FuzzInput): Promise<void> | void;
  /** For a live process: throws when it is no longer healthy (a worker restarted, a request fails). Run after each batch. */
  checkHealth?(): Promise<void>;
  close(): Promise<void>;
}

export interface FuzzSurface {
  readonly name: string;
  /** One input taking longer than this is a hang. */
  readonly timeBoundMs: number;
  /** Inputs run at once (independent connections to a live process); 1 when unset. */
  readonly concurrency?: number;
  open(): Promise<FuzzTarget>;
}

export interface Finding {
  readonly kind: 'crash' | 'hang' | 'unhealthy';
  /** `corpus/<file>` for a corpus input, else `seed:index` to reproduce it with. */
  readonly input: string;
  readonly message: string;
  readonly saved: string | null;
}

export interface SurfaceResult {
  readonly surface: string;
  readonly generated: number;
  readonly corpus: number;
  readonly findings: readonly Finding[];
  readonly ms: number;
  /** Heap growth between the end of the first tenth of the run and its end, after a collection when --expose-gc is on. */
  readonly heapGrowthBytes: number;
}

export interface RunOptions {
  readonly seed: number;
  readonly inputs: number;
  /** The first input's index (0 when unset): a range of a run, to find which input of a batch broke a live process. */
  readonly from?: number;
  /** Only this index (reproducing one input); the corpus is skipped. */
  readonly only?: number;
  readonly corpus: boolean;
  /** Health checks every this many inputs. */
  readonly batch?: number;
}

/** Heap growth beyond this over a run is a leak. */
const MAX_HEAP_GROWTH_BYTES = 256 * 1024 * 1024;
const MAX_FINDINGS = 20;
/** An unhealthy batch of at most this many inputs has them all saved. */
const MAX_SAVED_BATCH = 16;

export const CORPUS_DIR = path.resolve(__dirname, '..', '..', '..', 'test', 'fuzz', 'corpus');
const FINDINGS_DIR = path.resolve(__dirname, '..', '..', '..', 'test-artifacts', 'fuzz');

/** The random stream of input `index` of run `seed`: the two mixed (splitmix32's finalizer) into one 32-bit seed. */
export function inputRandom(seed: number, index: number): () => number {
  let z = (Math.imul(seed >>> 0, 0x9e3779b1) + index) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return seededRandom((z ^ (z >>> 16)) >>> 0);
}

/** The regression inputs of `surface`, one file each, the kind from its extension. */
export function corpusInputs(surface: string): { name: string; input: FuzzInput }[] {
  const dir = path.join(CORPUS_DIR, surface);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .sort()
    .map((name) => ({ name, input: { kind: path.extname(name).slice(1), bytes: fs.readFileSync(path.join(dir, name)) } }));
}

export async function runSurface(surface: FuzzSurface, options: RunOptions): Promise<SurfaceResult> {
  const started = Date.now();
  const target = await surface.open();
  const findings: Finding[] = [];
  const batch = options.batch ?? 1000;
  let generated = 0;
  let corpus = 0;
  let heapMark = 0;
  const runOne = async (input: FuzzInput, label: string): Promise<void> => {
    const t0 = Date.now();
    let error: unknown = null;
    try {
      await bounded(target.run(input), surface.timeBoundMs);
    } catch (e) {
      error = e;
    }
    const ms = Date.now() - t0;
    if (error instanceof HangError || (error === null && ms > surface.timeBoundMs)) {
      findings.push(finding(surface.name, 'hang', label, `took ${ms} ms (bound ${surface.timeBoundMs} ms)`, input));
    } else if (error !== null) {
      findings.push(finding(surface.name, 'crash', label, error instanceof Error ? (error.stack ?? error.message) : String(error), input));
    }
  };
  /** @param batchInputs the batch's inputs, saved when it is small enough to be a lead (a run bisecting a batch) */
  const health = async (label: string, batchInputs: readonly [string, FuzzInput][] = []): Promise<void> => {
    if (!target.checkHealth) return;
    try {
      await target.checkHealth();
    } catch (e) {
      const saved = batchInputs.length <= MAX_SAVED_BATCH ? batchInputs.map(([l, input]) => save(surface.name, l, input)) : [];
      findings.push({ kind: 'unhealthy', input: label, message: (e as Error).message, saved: saved.length > 0 ? saved.join(', ') : null });
    }
  };
  try {
    if (options.only !== undefined) {
      const input = target.generate(inputRandom(options.seed, options.only));
      await runOne(input, `${options.seed}:${options.only}`);
      generated = 1;
      await health(`${options.seed}:${options.only}`);
    } else {
      if (options.corpus) {
        for (const { name, input } of corpusInputs(surface.name)) {
          await runOne(input, `corpus/${surface.name}/${name}`);
          corpus++;
        }
        await health('the corpus');
      }
      const first = options.from ?? 0;
      const end = first + options.inputs;
      const heapMarkAt = first + Math.ceil(options.inputs / 10);
      for (let from = first; from < end && findings.length < MAX_FINDINGS; from += batch) {
        const to = Math.min(end, from + batch);
        let next = from;
        const batchInputs: [string, FuzzInput][] = [];
        const lane = async (): Promise<void> => {
          for (let i = next++; i < to; i = next++) {
            const input = target.generate(inputRandom(options.seed, i));
            if (to - from <= MAX_SAVED_BATCH) batchInputs.push([`${options.seed}:${i}`, input]);
            await runOne(input, `${options.seed}:${i}`);
          }
        };
        await Promise.all(Array.from({ length: surface.concurrency ?? 1 }, lane));
        generated = to - first;
        await health(`inputs ${options.seed}:${from} to ${options.seed}:${to - 1}`, batchInputs);
        if (heapMark === 0 && to >= heapMarkAt) heapMark = heapUsed();
      }
    }
  } finally {
    await target.close();
  }
  const heapGrowthBytes = heapMark === 0 ? 0 : heapUsed() - heapMark;
  if (heapGrowthBytes > MAX_HEAP_GROWTH_BYTES) {
    findings.push({ kind: 'crash', input: 'the whole run', message: `the heap grew by ${mb(heapGrowthBytes)} MB`, saved: null });
  }
  return { surface: surface.name, generated, corpus, findings, ms: Date.now() - started, heapGrowthBytes };
}

export function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

class HangError extends Error {}

/** The run of one input, failed with a HangError when it takes longer than `ms` (an asynchronous one; a synchronous one is timed after it returns). */
function bounded(run: Promise<void> | void, ms: number): Promise<void> | void {
  if (!(run instanceof Promise)) return run;
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    run,
    new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new HangError()), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function heapUsed(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

function finding(surface: string, kind: Finding['kind'], label: string, message: string, input: FuzzInput): Finding {
  return { kind, input: label, message, saved: save(surface, label, input) };
}

/** Writes `input` under test-artifacts/fuzz/<surface>/, named by its label; the path written. */
function save(surface: string, label: string, input: FuzzInput): string {
  const dir = path.join(FINDINGS_DIR, surface);
  fs.mkdirSync(dir, { recursive: true });
  const saved = path.join(dir, `${label.replace(/[^A-Za-z0-9._-]/g, '_')}.${input.kind}`);
  fs.writeFileSync(saved, input.bytes);
  return saved;
}
