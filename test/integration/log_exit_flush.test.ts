import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';

const LOG_DIR = path.resolve(__dirname, '../../src/log');

let directory = '';

before(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'proxy-log-exit-'));
});

after(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** Runs a process that opens a LogManager on `logPath`, logs, and calls process.exit at once. */
async function logThenExit(logPath: string, lines: number): Promise<{ code: number | null; stderr: string }> {
  const script = `
    const { LogManager } = require(${JSON.stringify(path.join(LOG_DIR, 'log_manager.js'))});
    const { compilePattern } = require(${JSON.stringify(path.join(LOG_DIR, 'pattern.js'))});
    const format = compilePattern('[%l] %v', { threadId: 1, processId: process.pid, escaped: false });
    LogManager.open({ level: 'info', componentLevels: new Map(), format, path: process.argv[1], fineGrain: false })
      .then((manager) => {
        for (let i = 0; i < Number(process.argv[2]); i++) manager.component('main').info('line ' + i);
        manager.component('main').critical('exiting');
        process.exit(3);
      })
      .catch((error) => {
        process.stderr.write(error.message + '\\n');
        process.exit(1);
      });
  `;
  const child = spawn(process.execPath, ['-e', script, logPath, String(lines)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

test('lines logged just before process.exit reach the file', { timeout: 20000 }, async () => {
  const logPath = path.join(directory, 'exit.log');
  const { code, stderr } = await logThenExit(logPath, 2000);
  assert.equal(code, 3);
  assert.equal(stderr, '');
  const lines = (await readFile(logPath, 'utf8')).split('\n');
  const expected = Array.from({ length: 2000 }, (_, i) => `[info] line ${i}`);
  assert.deepEqual(lines, [...expected, '[critical] exiting', '']);
});

test('a log path that cannot be opened fails cleanly', { timeout: 20000 }, async () => {
  const logPath = path.join(directory, 'missing', 'exit.log');
  const { code, stderr } = await logThenExit(logPath, 1);
  assert.equal(code, 1);
  assert.equal(stderr, `ENOENT: no such file or directory, open '${logPath}'\n`);
});
