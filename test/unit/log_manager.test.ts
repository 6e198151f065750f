import assert from 'node:assert/strict';
import { mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { HighResolutionClock } from '../../src/log/clock';
import { COMPONENT_NAMES } from '../../src/log/components';
import { globMatcher } from '../../src/log/file_levels';
import { LogManager, type LogManagerOptions } from '../../src/log/log_manager';
import {
  compilePattern,
  DEFAULT_LOG_FORMAT,
  type LineFormat,
  type LogRecord,
} from '../../src/log/pattern';
import { PACKAGE_ROOT } from '../../src/log/source_location';

let directory = '';
let files = 0;

before(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'proxy-log-'));
});

after(async () => {
  await rm(directory, { recursive: true, force: true });
});

function newLogPath(): string {
  return path.join(directory, `proxy-${++files}.log`);
}

function format(pattern: string): LineFormat {
  return compilePattern(pattern, { threadId: 7, processId: process.pid, escaped: false });
}

function options(overrides: Partial<LogManagerOptions>): LogManagerOptions {
  return {
    level: 'info',
    componentLevels: new Map(),
    format: format('[%l][%n] %v'),
    path: newLogPath(),
    fineGrain: false,
    ...overrides,
  };
}

/** The formatter's calls, to see which lines were formatted at all. */
class RecordingFormat implements LineFormat {
  readonly records: LogRecord[] = [];

  constructor(private readonly inner: LineFormat) {}

  get usesLocation(): boolean {
    return this.inner.usesLocation;
  }

  format(record: LogRecord): string {
    this.records.push(record);
    return this.inner.format(record);
  }
}

/** Output is asynchronous: waits until the file holds a line containing `marker`. */
async function linesThrough(file: string, marker: string): Promise<string[]> {
  for (;;) {
    const text = await readFile(file, 'utf8').catch(() => '');
    const lines = text.split('\n').slice(0, -1);
    if (lines.some((line) => line.includes(marker))) return lines;
    await sleep(10);
  }
}

test('lines in the default format land in the log file', { timeout: 20000 }, async () => {
  const manager = await LogManager.open(options({ format: format(DEFAULT_LOG_FORMAT) }));
  manager.component('upstream').info('cluster added');
  const [line] = await linesThrough(manager.path!, 'cluster added');
  assert.match(
    line!,
    new RegExp(
      String.raw`^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\]\[7\]\[info\]\[upstream\] ` +
        String.raw`\[test/unit/log_manager\.test\.ts:\d+\] cluster added$`,
    ),
  );
});

test('the location is the caller of the logging method', { timeout: 20000 }, async () => {
  const manager = await LogManager.open(options({ format: format('%s|%!|%v') }));
  function announceReady(): void {
    manager.component('main').warn('ready');
  }
  announceReady();
  assert.deepEqual(await linesThrough(manager.path!, 'ready'), ['log_manager.test.ts|announceReady|ready']);
});

test('%@ %# %! name the .ts statement that logged and its function', { timeout: 20000 }, async () => {
  const manager = await LogManager.open(options({ format: format('%@|%#|%!|%v') }));
  function reportLine(): void {
    manager.component('main').info('the line to find');
  }
  // Twice: the second line comes from the call site's cached location.
  reportLine();
  reportLine();
  manager.component('main').info('last');
  const file = 'test/unit/log_manager.test.ts';
  const source = (await readFile(path.join(PACKAGE_ROOT, file), 'utf8')).split('\n');
  const line = source.findIndex((text) => text.includes("info('the line to find')")) + 1;
  const expected = `${file}:${line}|${line}|reportLine|the line to find`;
  assert.deepEqual((await linesThrough(manager.path!, '|last')).slice(0, 2), [expected, expected]);
});

test('a disabled level formats nothing and writes nothing', { timeout: 20000 }, async () => {
  const recording = new RecordingFormat(format('[%l][%n] %v'));
  const manager = await LogManager.open(
    options({ level: 'warning', componentLevels: new Map([['upstream', 'trace']]), format: recording }),
  );
  const main = manager.component('main');
  main.info('filtered info');
  main.debug('filtered debug');
  assert.equal(recording.records.length, 0);
  assert.equal(main.enabled('info'), false);
  assert.equal(main.enabled('warning'), true);

  main.warn('kept warning');
  main.critical('kept critical');
  manager.component('upstream').trace('kept trace');
  manager.component('upstream').setLevel('off');
  manager.component('upstream').critical('filtered critical');
  main.error('last');

  assert.deepEqual(
    recording.records.map((record) => record.message),
    ['kept warning', 'kept critical', 'kept trace', 'last'],
  );
  assert.deepEqual(await linesThrough(manager.path!, 'last'), [
    '[warning][main] kept warning',
    '[critical][main] kept critical',
    '[trace][upstream] kept trace',
    '[error][main] last',
  ]);
});

test('the caller is looked up only when the format shows it', { timeout: 20000 }, async () => {
  const withoutLocation = new RecordingFormat(format('%v'));
  const plain = await LogManager.open(options({ format: withoutLocation }));
  plain.component('main').info('plain');
  assert.equal(withoutLocation.records[0]!.location, null);

  const withLocation = new RecordingFormat(format('%g %v'));
  const located = await LogManager.open(options({ format: withLocation }));
  located.component('main').info('located');
  assert.equal(withLocation.records[0]!.location?.path, 'test/unit/log_manager.test.ts');
});

test('levels are listed in registry order and change singly or all at once', { timeout: 20000 }, async () => {
  const manager = await LogManager.open(
    options({ level: 'info', componentLevels: new Map([['upstream', 'debug'], ['admin', 'off']]) }),
  );
  const listing = manager.componentLevels();
  assert.deepEqual(listing.map((entry) => entry.name), [...COMPONENT_NAMES]);
  assert.equal(listing.find((entry) => entry.name === 'upstream')?.level, 'debug');
  assert.equal(listing.find((entry) => entry.name === 'admin')?.level, 'off');
  assert.equal(listing.find((entry) => entry.name === 'main')?.level, 'info');

  manager.setComponentLevel('main', 'critical');
  assert.equal(manager.component('main').level, 'critical');
  manager.setLevel('warning');
  assert.ok(manager.componentLevels().every((entry) => entry.level === 'warning'));
});

test('reopen() sends later lines to a new file after the old one was moved away', { timeout: 20000 }, async () => {
  const file = newLogPath();
  const manager = await LogManager.open(options({ path: file }));
  const main = manager.component('main');
  main.info('before rotation');
  await linesThrough(file, 'before rotation');

  await rename(file, `${file}.1`);
  main.info('after the move, before reopen');
  await manager.reopen();
  main.info('after reopen');

  assert.deepEqual(await linesThrough(file, 'after reopen'), ['[info][main] after reopen']);
  assert.deepEqual(await linesThrough(`${file}.1`, 'before reopen'), [
    '[info][main] before rotation',
    '[info][main] after the move, before reopen',
  ]);
});

test('logging to stderr has nothing to reopen', { timeout: 20000 }, async () => {
  const manager = await LogManager.open(options({ path: null }));
  await manager.reopen();
  assert.equal(manager.path, null);
});

test('an unwritable log path fails to open', { timeout: 20000 }, async () => {
  await assert.rejects(LogManager.open(options({ path: path.join(directory, 'missing', 'proxy.log') })), {
    code: 'ENOENT',
  });
});

test('without fine-grain logging, a module writes through the component logger it is handed', { timeout: 20000 }, async () => {
  const manager = await LogManager.open(options({}));
  assert.equal(manager.component('upstream').forFile(__filename), manager.component('upstream'));
  assert.deepEqual(manager.fileLevels(), []);
});

test('fine-grain logging: one logger per source file, named by its path', { timeout: 20000 }, async () => {
  const manager = await LogManager.open(options({ fineGrain: true, level: 'warning' }));
  const logger = manager.component('upstream').forFile(__filename);
  assert.equal(logger.name, 'test/unit/log_manager.test.ts');
  assert.equal(manager.forFile(__filename), logger);
  assert.equal(manager.component('router').forFile(__filename), logger);
  assert.equal(logger.forFile(__filename), logger);
  assert.equal(logger.level, 'warning');

  logger.warn('from a file logger');
  assert.deepEqual(await linesThrough(manager.path!, 'from a file logger'), [
    '[warning][test/unit/log_manager.test.ts] from a file logger',
  ]);
});

test('fine-grain levels follow file globs, now and for files loaded later', { timeout: 20000 }, async () => {
  const compiled = (source: string): string => path.join(PACKAGE_ROOT, 'dist', source);
  const manager = await LogManager.open(options({ fineGrain: true, level: 'info' }));
  const cluster = manager.forFile(compiled('src/upstream/cluster.js'));
  assert.equal(cluster.name, 'src/upstream/cluster.ts');

  assert.equal(manager.setFileLevel('src/upstream/*', 'debug'), 1);
  assert.equal(cluster.level, 'debug');
  assert.equal(manager.forFile(compiled('src/upstream/lb/ring_hash.js')).level, 'info');
  assert.equal(manager.setFileLevel('src/upstream/**', 'trace'), 2);
  assert.equal(manager.forFile(compiled('src/upstream/lb/maglev.js')).level, 'trace');
  assert.equal(manager.setFileLevel('**/maglev.ts', 'error'), 1);
  assert.equal(manager.forFile(compiled('src/upstream/lb/maglev.js')).level, 'error');

  manager.setLevel('critical');
  assert.equal(manager.forFile(compiled('src/upstream/health.js')).level, 'critical');
  assert.deepEqual(manager.fileLevels(), [
    { name: 'src/upstream/cluster.ts', level: 'critical' },
    { name: 'src/upstream/lb/ring_hash.ts', level: 'critical' },
    { name: 'src/upstream/lb/maglev.ts', level: 'critical' },
    { name: 'src/upstream/health.ts', level: 'critical' },
  ]);
});

test('file globs: * and ? within a segment, ** across segments', { timeout: 20000 }, () => {
  const matches = (glob: string, file: string): boolean => globMatcher(glob).test(file);
  assert.equal(matches('src/upstream/*.ts', 'src/upstream/cluster.ts'), true);
  assert.equal(matches('src/upstream/*.ts', 'src/upstream/lb/maglev.ts'), false);
  assert.equal(matches('src/upstream/**', 'src/upstream/lb/maglev.ts'), true);
  assert.equal(matches('**/maglev.ts', 'src/upstream/lb/maglev.ts'), true);
  assert.equal(matches('**/maglev.ts', 'maglev.ts'), true);
  assert.equal(matches('src/pool/http?.ts', 'src/pool/http1.ts'), true);
  assert.equal(matches('src/pool/http?.ts', 'src/pool/http.ts'), false);
  // Regular-expression characters are literal.
  assert.equal(matches('src/a.ts', 'src/abts'), false);
  assert.equal(matches('src/(a)+.ts', 'src/(a)+.ts'), true);
});

test('the high-resolution clock tells wall-clock time in seconds and nanoseconds', { timeout: 20000 }, () => {
  const clock = new HighResolutionClock();
  for (let i = 0; i < 100; i++) {
    const now = clock.now();
    assert.ok(Number.isInteger(now.nanos) && now.nanos >= 0 && now.nanos < 1e9);
    // Loose on purpose: this checks the epoch anchoring, not how close two reads can be.
    assert.ok(Math.abs(now.seconds * 1000 + now.nanos / 1e6 - Date.now()) < 1000);
  }
});
