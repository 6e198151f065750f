import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { AccessLogManager } from '../../src/access_log/access_log_manager';
import { BufferedFileWriter } from '../../src/access_log/file_writer';
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
  const writer = await BufferedFileWriter.open(file, { flushIntervalMs: 60_000, onError });
  writer.write('one\n');
  writer.write('two\n');
  assert.equal(read(file), '');
  await writer.flush();
  assert.equal(read(file), 'one\ntwo\n');
  await writer.close();
});

test('a full buffer is written at once', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'full.log');
  const writer = await BufferedFileWriter.open(file, { flushIntervalMs: 60_000, flushThresholdBytes: 10, onError });
  writer.write('12345\n');
  assert.equal(read(file), '');
  writer.write('67890\n');
  await waitFor('the full buffer in the file', () => (read(file) === '12345\n67890\n' ? true : undefined));
  await writer.close();
});

test('the flush interval writes what is buffered', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'interval.log');
  const writer = await BufferedFileWriter.open(file, { flushIntervalMs: 20, onError });
  writer.write('tick\n');
  await waitFor('the timer flush', () => (read(file) === 'tick\n' ? true : undefined));
  await writer.close();
});

test('interval 0 writes every line as it comes', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'immediate.log');
  const writer = await BufferedFileWriter.open(file, { flushIntervalMs: 0, onError });
  writer.write('now\n');
  await waitFor('the line', () => (read(file) === 'now\n' ? true : undefined));
  await writer.close();
});

test('reopen finishes the moved file and continues at the path', { timeout: 20000 }, async () => {
  const file = path.join(dir, 'rotated.log');
  const writer = await BufferedFileWriter.open(file, { flushIntervalMs: 60_000, onError });
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
  const writer = await BufferedFileWriter.open(file, { flushIntervalMs: 60_000, onError });
  writer.write('last\n');
  await writer.close();
  writer.write('dropped\n');
  await writer.close();
  assert.equal(read(file), 'last\n');
});

test('a file that cannot be opened rejects', { timeout: 20000 }, async () => {
  await assert.rejects(BufferedFileWriter.open(path.join(dir, 'missing', 'x.log'), { flushIntervalMs: 10, onError }), { code: 'ENOENT' });
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
