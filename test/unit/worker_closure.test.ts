// A worker process loads only what carries traffic: from the file the supervisor forks and the
// bundle it loads, imports (type-only ones too) reach none of the supervisor's code (cluster discovery, CDS and
// EDS, DNS, health checking, the outlier detector, xDS, admin). And src/upstream's folders say
// which process runs their code: worker/ and supervisor/ import only themselves and shared/.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { importChain, importedSourceFiles, reachableFrom, ROOT, sourceFiles } from '../helpers/import_graph';

const SRC = path.join(ROOT, 'src');

/** What only the supervisor runs, as repository paths (a folder ends with a slash). */
const SUPERVISOR_ONLY = [
  // cluster types and their discovery (static, DNS, EDS, original_dst, aggregate), CDS, active
  // health checking, the outlier detector, the cluster manager that versions memberships
  'src/upstream/supervisor/',
  'src/config/xds/',
  // RDS subscriptions, and the route configurations they check before the workers get them
  'src/rds/',
  // the SDS clients, whose secrets reach the workers as messages
  'src/secret/',
  'src/network/dns/',
  'src/admin/',
  'src/server/supervisor.ts',
  'src/server/worker_pool.ts',
  'src/server/worker_launch.ts',
  // the registry of every extension, with the cluster types and health checkers
  'src/extensions/builtin_extensions.ts',
  'src/extensions/extension_factories.ts',
  'src/extensions/supervisor_factories.ts',
  'src/extensions/clusters/',
  'src/extensions/health_checkers/',
  // the stats sinks, which the supervisor flushes
  'src/extensions/stat_sinks/',
  'src/stats/sinks/',
];

function supervisorOnly(file: string): boolean {
  const relative = path.relative(ROOT, file);
  return SUPERVISOR_ONLY.some((entry) => (entry.endsWith('/') ? relative.startsWith(entry) : relative === entry));
}

/** The module the supervisor forks for each worker, as worker_launch.ts names it. */
function workerEntry(): string {
  const launch = fs.readFileSync(path.join(SRC, 'server', 'worker_launch.ts'), 'utf8');
  const entry = /const WORKER_ENTRY = path\.join\(__dirname, '(\w+)\.js'\)/.exec(launch);
  assert.ok(entry !== null, 'worker_launch.ts no longer names the module it forks as WORKER_ENTRY');
  return path.join(SRC, 'server', `${entry[1]}.ts`);
}

const { BUNDLES } = require(path.join(ROOT, 'scripts', 'build-bundle.js')) as { BUNDLES: readonly { out: string; entry: string }[] };

/** The source of the module a bundle starts from (the build bundles tsc's output of it). */
function bundleEntry(out: string): string {
  const bundle = BUNDLES.find((candidate) => candidate.out === out);
  assert.ok(bundle !== undefined, `scripts/build-bundle.js makes no ${out}`);
  return path.join(ROOT, bundle.entry.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
}

/** The .ts files a built bundle holds, as its source map names them. */
function bundledSources(out: string): string[] {
  const file = path.join(ROOT, 'dist', 'bundle', out);
  const map = JSON.parse(fs.readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.filter((source) => source.endsWith('.ts')).map((source) => path.resolve(path.dirname(file), source));
}

test('the worker process reaches none of the supervisor-only code by imports', { timeout: 10_000 }, () => {
  // The forked module loads the worker's bundle, whose entry is the worker's code.
  assert.match(fs.readFileSync(workerEntry(), 'utf8'), /require\('\.\.\/\.\.\/bundle\/worker\.js'\)/);
  const reached = reachableFrom([workerEntry(), bundleEntry('worker.js')]);
  const chains = [...reached.keys()].filter(supervisorOnly).map((file) => importChain(reached, file));
  assert.ok(chains.length === 0, `a worker imports supervisor-only code:\n  ${chains.join('\n  ')}`);
  // The check can fail: the command line entry (bin/proxy, the supervisor) reaches every entry.
  const proxy = [...reachableFrom([bundleEntry('proxy.js')]).keys()].map((file) => path.relative(ROOT, file));
  const unreached = SUPERVISOR_ONLY.filter((entry) => !proxy.some((file) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry)));
  assert.deepEqual(unreached, []);
});

test("the worker's bundle, what a worker loads, holds none of the supervisor-only code", () => {
  const held = bundledSources('worker.js').filter(supervisorOnly).map((file) => path.relative(ROOT, file));
  assert.deepEqual(held, []);
  // The check can fail: the supervisor's bundle holds every supervisor-only file or folder with
  // code (a file of types only, such as extension_factories.ts, compiles to nothing to bundle).
  const proxy = bundledSources('proxy.js').map((file) => path.relative(ROOT, file));
  const missing = SUPERVISOR_ONLY.filter((entry) => !proxy.some((file) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry)));
  assert.deepEqual(missing, ['src/extensions/extension_factories.ts']);
});

test("src/upstream's worker/ and supervisor/ import only their own folder and shared/, shared/ only itself", () => {
  const upstream = path.join(SRC, 'upstream');
  const folderOf = (file: string): string => path.relative(upstream, file).split(path.sep)[0]!;
  const files = sourceFiles(upstream);
  assert.deepEqual(
    files.filter((file) => !['worker', 'supervisor', 'shared'].includes(folderOf(file))).map((file) => path.relative(ROOT, file)),
    [],
    'every file of src/upstream is in worker/, supervisor/ or shared/',
  );
  const wrong = files.flatMap((file) =>
    importedSourceFiles(file)
      .filter((imported) => imported.startsWith(upstream + path.sep))
      .filter((imported) => folderOf(imported) !== 'shared' && folderOf(imported) !== folderOf(file))
      .map((imported) => `${path.relative(ROOT, file)} imports ${path.relative(ROOT, imported)}`),
  );
  assert.deepEqual(wrong, []);
});
