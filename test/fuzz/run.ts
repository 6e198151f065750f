// `make fuzz`: every surface at FUZZ_INPUTS inputs (100,000 by default) plus its corpus.
//   node --expose-gc dist/test/fuzz/run.js [--inputs N] [--seed S] [--from I] [--batch B] [surface...]
//   node dist/test/fuzz/run.js --reproduce <surface>:<seed>:<index>
// Exits 1 when there is a finding; each is saved under test-artifacts/fuzz/<surface>/.

import { mb, runSurface, type SurfaceResult } from './driver';
import { SURFACES } from './surfaces';

async function main(argv: readonly string[]): Promise<number> {
  let inputs = Number(process.env['FUZZ_INPUTS'] ?? 100_000);
  let seed = Number(process.env['FUZZ_SEED'] ?? 1);
  let from = 0;
  let batch: number | undefined;
  let reproduce: { surface: string; seed: number; index: number } | null = null;
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--inputs') inputs = Number(argv[++i]);
    else if (arg === '--seed') seed = Number(argv[++i]);
    else if (arg === '--from') from = Number(argv[++i]);
    else if (arg === '--batch') batch = Number(argv[++i]);
    else if (arg === '--reproduce') {
      const [surface, s, index] = (argv[++i] ?? '').split(':');
      reproduce = { surface: surface ?? '', seed: Number(s), index: Number(index) };
    } else names.push(arg);
  }
  if (reproduce !== null) names.splice(0, names.length, reproduce.surface);
  const unknown = names.filter((name) => !SURFACES.some((s) => s.name === name));
  if (unknown.length > 0 || ![inputs, seed, from, batch ?? 1].every(Number.isInteger)) {
    console.error(`usage: run.js [--inputs N] [--seed S] [--from I] [--batch B] [--reproduce surface:seed:index] [${SURFACES.map((s) => s.name).join('|')}...]`);
    return 2;
  }
  const results: SurfaceResult[] = [];
  for (const surface of SURFACES.filter((s) => names.length === 0 || names.includes(s.name))) {
    const result = await runSurface(surface, reproduce === null ? { seed, inputs, from, batch, corpus: from === 0 } : { seed: reproduce.seed, inputs: 1, only: reproduce.index, corpus: false });
    results.push(result);
    console.log(
      `${result.surface}: ${result.generated} inputs (seed ${seed}) + ${result.corpus} corpus, ` +
        `${result.findings.filter((f) => f.kind !== 'hang').length} crashes, ${result.findings.filter((f) => f.kind === 'hang').length} hangs, ` +
        `${(result.ms / 1000).toFixed(1)} s, heap ${result.heapGrowthBytes >= 0 ? '+' : ''}${mb(result.heapGrowthBytes)} MB`,
    );
    for (const f of result.findings) console.log(`  ${f.kind} at ${f.input}${f.saved ? ` (saved as ${f.saved})` : ''}: ${f.message}`);
  }
  return results.some((r) => r.findings.length > 0) ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(2);
  },
);
