import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { PROXY_BIN } from '../helpers/proxy_process';

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

/** A listener whose tcp_proxy names a cluster that does not exist: one error line each. */
function brokenListener(name: string, cluster: string): unknown {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    filter_chains: [
      {
        filters: [
          {
            name: 'proxy.filters.network.tcp_proxy',
            typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: name, cluster },
          },
        ],
      },
    ],
  };
}

test('the binary exits only after its log lines are written, complete and in order', { timeout: 30000 }, async () => {
  // A FIFO that is read only after a while: the first line, longer than the pipe holds, is
  // still being written when the proxy wants to exit. sonic-boom's exit hook would write the
  // second line beside it, ahead of the rest of the first or cutting it short.
  const fifo = path.join(directory, 'validate.fifo');
  execFileSync('mkfifo', [fifo]);
  const config = path.join(directory, 'broken.json');
  const longName = 'c'.repeat(200 * 1024);
  await writeFile(config, JSON.stringify({ static_resources: { listeners: [brokenListener('first', longName), brokenListener('second', 'short')] } }));
  const proxy = spawn(process.execPath, [PROXY_BIN, '--mode', 'validate', '-c', config, '--log-path', fifo, '--log-format', '%v'], { stdio: 'ignore' });
  const exited = once(proxy, 'exit') as Promise<[number | null]>;
  // Opening either end of a FIFO waits for the other.
  const reader = await open(fifo, 'r');
  await new Promise((resolve) => setTimeout(resolve, 500));
  const text = (await reader.readFile()).toString();
  await reader.close();
  assert.deepEqual(await exited, [1, null]);
  const prefix = `error initializing configuration '${config}': ${config}: static_resources.listeners`;
  assert.deepEqual(text.split('\n'), [
    `${prefix}[0].filter_chains[0].filters[0].typed_config.cluster: tcp_proxy: unknown cluster '${longName}'`,
    `${prefix}[1].filter_chains[0].filters[0].typed_config.cluster: tcp_proxy: unknown cluster 'short'`,
    '',
  ]);
});
