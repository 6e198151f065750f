import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { AccessLogManager } from '../../src/access_log/access_log_manager';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { BufferedFileWriter, PIPE_BUF, wholeWrites } from '../../src/access_log/file_writer';
import { waitFor } from '../helpers/proxy_process';

let dir = '';
const errors: Error[] = [];
const onError = (error: Error) => errors.push(error);

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-access-log-'));
});

after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(errors, []);
});

const read = (file: string) => fs.readFileSync(file, 'utf8');

test('lines wait in the buffer until it is flushed', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'buffered.log');
  const writer = await BufferedFileWriter.open(file, { encoding: 'utf8', flushIntervalMs: 60_000, onError });
  writer.write('one\n');
  writer.write('two\n');
  assert.equal(read(file), '');
  await writer.flush();
  assert.equal(read(file), 'one\ntwo\n');
  await writer.close();
});

test('a full buffer is written at once', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'full.log');
  const writer = await BufferedFileWriter.open(file, { encoding: 'utf8', flushIntervalMs: 60_000, flushThresholdBytes: 10, onError });
  writer.write('12345\n');
  assert.equal(read(file), '');
  writer.write('67890\n');
  await waitFor('the full buffer in the file', () => (read(file) === '12345\n67890\n' ? true : undefined));
  await writer.close();
});

test('the flush interval writes what is buffered', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'interval.log');
  const writer = await BufferedFileWriter.open(file, { encoding: 'utf8', flushIntervalMs: 20, onError });
  writer.write('tick\n');
  await waitFor('the timer flush', () => (read(file) === 'tick\n' ? true : undefined));
  await writer.close();
});

test('interval 0 writes every line as it comes', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'immediate.log');
  const writer = await BufferedFileWriter.open(file, { encoding: 'utf8', flushIntervalMs: 0, onError });
  writer.write('now\n');
  await waitFor('the line', () => (read(file) === 'now\n' ? true : undefined));
  await writer.close();
});

test('reopen finishes the moved file and continues at the path', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'rotated.log');
  const writer = await BufferedFileWriter.open(file, { encoding: 'utf8', flushIntervalMs: 60_000, onError });
  writer.write('before\n');
  fs.renameSync(file, `${file}.1`);
  await writer.reopen();
  writer.write('after\n');
  await writer.close();
  assert.equal(read(`${file}.1`), 'before\n');
  assert.equal(read(file), 'after\n');
});

test('close flushes; later lines are dropped', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'closed.log');
  const writer = await BufferedFileWriter.open(file, { encoding: 'utf8', flushIntervalMs: 60_000, onError });
  writer.write('last\n');
  await writer.close();
  writer.write('dropped\n');
  await writer.close();
  assert.equal(read(file), 'last\n');
});

test('a file that cannot be opened rejects', { timeout: 20000 }, async () => {
  await assert.rejects(BufferedFileWriter.open(path.join(dir, 'missing', 'x.log'), { encoding: 'utf8', flushIntervalMs: 10, onError }), { code: 'ENOENT' });
});

test('the manager shares one writer per path and reopens and closes them all', { timeout: 20000 }, async () => {
  const manager = new AccessLogManager({ flushIntervalMs: 60_000, onError: (_path, error) => onError(error) });
  const file = path.join(dir, 'shared.log');
  const [a, b] = await Promise.all([manager.open(file), manager.open(file)]);
  assert.equal(a, b);
  a.write('a\n');
  b.write('b\n');
  fs.renameSync(file, `${file}.1`);
  await manager.reopen();
  a.write('c\n');
  await assert.rejects(manager.open(path.join(dir, 'missing', 'y.log')));
  await manager.close();
  assert.equal(read(`${file}.1`), 'a\nb\n');
  assert.equal(read(file), 'c\n');
});

test('entries share a write up to the limit; a longer one goes alone', () => {
  const entries = ['a'.repeat(3000), 'b'.repeat(1000), 'c'.repeat(200), 'd'.repeat(5000), 'e'];
  const data = Buffer.from(entries.join(''));
  const ends = entries.map((_, i) => entries.slice(0, i + 1).join('').length);
  const writes = wholeWrites(data, ends, PIPE_BUF);
  assert.deepEqual(
    writes.map((write) => write.toString()),
    [entries[0]! + entries[1]!, entries[2]!, entries[3]!, entries[4]!],
  );
  assert.deepEqual(
    wholeWrites(data, ends, Infinity).map((write) => write.length),
    [9201],
  );
  assert.deepEqual(wholeWrites(Buffer.alloc(0), [], PIPE_BUF), []);
});

test('entries longer than a chunk keep their place among the others', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'long.log');
  const writer = await BufferedFileWriter.open(file, { encoding: 'utf8', flushIntervalMs: 60_000, onError });
  const long = `${'é'.repeat(40_000)}\n`;
  writer.write('short\n');
  writer.write(long);
  writer.write('after\n');
  await writer.close();
  assert.equal(read(file), `short\n${long}after\n`);
});

test('latin1: each character of a byte string is one byte of the file, long entries too', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'bytes.log');
  const writer = await BufferedFileWriter.open(file, { encoding: 'latin1', flushIntervalMs: 60_000, onError });
  // "café" as it came off the wire: its UTF-8 bytes, one character each.
  const line = 'caf\xc3\xa9 \xff\n';
  const long = `${'\xe9'.repeat(70_000)}\n`;
  writer.write(line);
  writer.write(long);
  writer.write(line);
  await writer.close();
  const bytes = fs.readFileSync(file);
  assert.equal(bytes.length, 2 * 8 + 70_001);
  assert.deepEqual(bytes.subarray(0, 8), Buffer.from([0x63, 0x61, 0x66, 0xc3, 0xa9, 0x20, 0xff, 0x0a]));
  assert.equal(bytes.toString('utf8', 0, 6), 'café ');
  assert.deepEqual(bytes.subarray(8, 8 + 70_001), Buffer.from(long, 'latin1'));
});

const WRITER_MODULE = path.join(__dirname, '../../src/access_log/file_writer.js');

/** A process that writes `count` numbered lines of `width` bytes to `file` through a writer opened with openSync, then closes it. */
function writerProcess(file: string, tag: string, count: number, width: number): Promise<{ stdout: string }> {
  const script = `
    const { BufferedFileWriter } = require(${JSON.stringify(WRITER_MODULE)});
    const w = BufferedFileWriter.openSync(${JSON.stringify(file)}, { encoding: 'utf8', flushIntervalMs: 5, onError: (e) => { console.error(e); process.exit(2); } });
    for (let i = 0; i < ${count}; i++) w.write(${JSON.stringify(tag)} + String(i).padStart(6, '0') + 'x'.repeat(${width}) + '\\n');
    w.close().then(() => process.exit(0));
  `;
  return promisify(execFile)(process.execPath, ['-e', script], { timeout: 20000 });
}

test('/dev/stdout works: the entries reach the process\'s standard output', { timeout: 30000 }, async () => {
  const { stdout } = await writerProcess('/dev/stdout', 'out', 3, 2);
  assert.equal(stdout, 'out000000xx\nout000001xx\nout000002xx\n');
});

test('two processes appending to one file never cut each other\'s lines', { timeout: 30000 }, async () => {
  const file = path.join(dir, 'shared_by_two.log');
  await Promise.all([writerProcess(file, 'A', 2000, 300), writerProcess(file, 'B', 2000, 300)]);
  const lines = read(file).split('\n');
  assert.equal(lines.pop(), '');
  assert.equal(lines.length, 4000);
  for (const line of lines) assert.match(line, /^[AB]\d{6}x{300}$/);
  for (const tag of ['A', 'B']) {
    const numbers = lines.filter((line) => line.startsWith(tag)).map((line) => Number(line.slice(1, 7)));
    assert.deepEqual(numbers, [...numbers.keys()]);
  }
});
