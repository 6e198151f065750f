// scripts/hot-restarter driving a start script written here, whose child is a small node
// program that prints its RESTART_EPOCH and each signal it gets: the wrapper's lines and exit
// codes must be those of Envoy's restarter/hot-restarter.py.

import { test, type TestContext } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../bench/free_port';
import { routeAllListener } from '../helpers/config_fixtures';
import { DnsTestServer } from '../helpers/dns_test_server';
import { HotRestarterRun } from '../helpers/hot_restart_run';
import { startUpstream } from '../helpers/http_peers';
import { request } from '../helpers/proxy_process';

const WRAPPER = path.join(__dirname, '..', '..', '..', 'scripts', 'hot-restarter');
const BOUNDED = { timeout: 20_000 };
const GONE_POLL_MS = 20;

/**
 * The child: a sleep loop that reports its epoch and signals, and exits early when told to. It
 * says it serves on PROXY_READY_FD, as the proxy does, at once or, at epoch
 * HOLD_READY_AT_EPOCH, on SIGUSR2 (an initialization that takes its time); at epoch
 * SILENT_AT_EPOCH it closes the descriptor without the newline instead (a failed write). Its
 * pid line comes after the handlers: a SIGUSR1 before them would open Node's inspector instead
 * of being reported, a SIGUSR2 would kill it.
 */
const CHILD_PROGRAM = `
const fs = require('node:fs');
const epoch = process.env.RESTART_EPOCH;
process.on('SIGUSR1', () => console.log(\`child epoch=\${epoch} got SIGUSR1\`));
process.on('SIGTERM', () => {
  console.log(\`child epoch=\${epoch} got SIGTERM\`);
  process.exit(0);
});
const serve = () => {
  const fd = Number(process.env.PROXY_READY_FD);
  if (epoch !== process.env.SILENT_AT_EPOCH) fs.writeSync(fd, '\\n');
  fs.closeSync(fd);
};
const held = epoch === process.env.HOLD_READY_AT_EPOCH;
if (held) process.on('SIGUSR2', serve);
console.log(\`child epoch=\${epoch} pid=\${process.pid}\`);
if (epoch === process.env.EXIT_AT_EPOCH) process.exit(Number(process.env.EXIT_CODE));
if (!held) serve();
setInterval(() => {}, 1000);
`;

class Wrapper {
  readonly process: ChildProcess;
  readonly lines: string[] = [];
  private readonly waiters: (() => void)[] = [];
  private ended = false;
  /** Exit code and signal, once the wrapper has exited and every line has been read. */
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;

  constructor(startScript: string, env: Record<string, string>) {
    this.process = spawn(WRAPPER, [startScript], {
      env: { ...process.env, ...env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // 'close' comes after stdout's end, which the children share: all of them are gone too.
    this.exited = once(this.process, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
    const wake = () => this.waiters.splice(0).forEach((waiter) => waiter());
    readline
      .createInterface({ input: this.process.stdout! })
      .on('line', (line) => {
        this.lines.push(line);
        wake();
      })
      .on('close', () => {
        this.ended = true;
        wake();
      });
  }

  /** The `nth` line matching `pattern` (the first unless told), once it has been printed. */
  async waitFor(pattern: RegExp, nth = 1): Promise<RegExpMatchArray> {
    for (;;) {
      const matches = this.lines.map((line) => pattern.exec(line)).filter((match) => match !== null);
      if (matches.length >= nth) return matches[nth - 1]!;
      if (this.ended) throw new Error(`the wrapper ended without printing ${pattern}:\n${this.lines.join('\n')}`);
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
  }

  /** The pid of the child started at `epoch`, once it runs. */
  async childPid(epoch: number): Promise<number> {
    return Number((await this.waitFor(new RegExp(`^child epoch=${epoch} pid=(\\d+)$`)))[1]);
  }

  /** The pid of the child started at `epoch`, once the wrapper has heard it serves. */
  async serving(epoch: number): Promise<number> {
    return Number((await this.waitFor(new RegExp(`^epoch ${epoch} serves \\(PID=(\\d+)\\)$`)))[1]);
  }

  /** The wrapper's own lines, without its children's. */
  wrapperLines(): string[] {
    return this.lines.filter((line) => !line.startsWith('child '));
  }

  signal(signal: NodeJS.Signals): void {
    this.process.kill(signal);
  }
}

function startWrapper(t: TestContext, env: Record<string, string> = {}): Wrapper {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-hot-restarter-test-'));
  const program = path.join(dir, 'child.js');
  fs.writeFileSync(program, CHILD_PROGRAM);
  const startScript = path.join(dir, 'start.sh');
  fs.writeFileSync(startScript, `#!/bin/sh\nexec "${process.execPath}" "${program}"\n`, { mode: 0o755 });
  const wrapper = new Wrapper(startScript, env);
  t.after(async () => {
    if (wrapper.process.exitCode === null && wrapper.process.signalCode === null) wrapper.signal('SIGKILL');
    for (const match of wrapper.lines.map((line) => /^child epoch=\d+ pid=(\d+)$/.exec(line))) {
      if (match) killIfAlive(Number(match[1]));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return wrapper;
}

/** The wrapper's lines from its start until epoch 1 is forked, epoch 0 serving. */
function firstRestartLines(target: string | undefined, epoch0: number, epoch1: number): string[] {
  return [
    `starting hot-restarter with target: ${target}`,
    'forking and execing new child process at epoch 0',
    `forked new child process with PID=${epoch0}`,
    `epoch 0 serves (PID=${epoch0})`,
    'got SIGHUP',
    'forking and execing new child process at epoch 1',
    `forked new child process with PID=${epoch1}`,
  ];
}

/**
 * Lets the held epoch 1 go on (SIGUSR2), waits for epoch 2 to serve, then ends them all with
 * SIGTERM, cleanly. Epoch 2's pid.
 */
async function releaseAndTerminate(wrapper: Wrapper, epoch1: number): Promise<number> {
  process.kill(epoch1, 'SIGUSR2');
  const epoch2 = await wrapper.serving(2);
  assert.ok(!isGone(epoch1), 'epoch 1 runs on');
  wrapper.signal('SIGTERM');
  assert.deepEqual(await wrapper.exited, [0, null]);
  return epoch2;
}

/** The wrapper's lines from the fork of epoch 2 until all three epochs ended on SIGTERM. */
function thirdEpochLines(epoch0: number, epoch1: number, epoch2: number): string[] {
  return [
    'forking and execing new child process at epoch 2',
    `forked new child process with PID=${epoch2}`,
    `epoch 2 serves (PID=${epoch2})`,
    'got SIGTERM',
    ...[epoch0, epoch1, epoch2].map((pid) => `sending TERM to PID=${pid}`),
    'all children exited cleanly',
  ];
}

function killIfAlive(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Gone, or a zombie that only waits for someone to reap it. */
function isGone(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

async function waitGone(pid: number): Promise<void> {
  while (!isGone(pid)) await sleep(GONE_POLL_MS);
}

test('SIGHUP starts the next epoch, SIGUSR1 reaches every child, SIGTERM ends them all cleanly', BOUNDED, async (t) => {
  const wrapper = startWrapper(t);
  const target = wrapper.process.spawnargs[1];
  const epoch0 = await wrapper.serving(0);

  wrapper.signal('SIGHUP');
  const epoch1 = await wrapper.serving(1);

  wrapper.signal('SIGUSR1');
  await wrapper.waitFor(/^child epoch=0 got SIGUSR1$/);
  await wrapper.waitFor(/^child epoch=1 got SIGUSR1$/);

  wrapper.signal('SIGTERM');
  assert.deepEqual(await wrapper.exited, [0, null]);
  assert.deepEqual(wrapper.wrapperLines(), [
    ...firstRestartLines(target, epoch0, epoch1),
    `epoch 1 serves (PID=${epoch1})`,
    `sending SIGUSR1 to PID=${epoch0}`,
    `sending SIGUSR1 to PID=${epoch1}`,
    'got SIGTERM',
    `sending TERM to PID=${epoch0}`,
    `sending TERM to PID=${epoch1}`,
    'all children exited cleanly',
  ]);
  assert.ok(wrapper.lines.includes('child epoch=0 got SIGTERM'));
  assert.ok(wrapper.lines.includes('child epoch=1 got SIGTERM'));
});

test('a child exiting non-zero makes the wrapper kill the others and exit 1', BOUNDED, async (t) => {
  const wrapper = startWrapper(t, { EXIT_AT_EPOCH: '1', EXIT_CODE: '3' });
  const epoch0 = await wrapper.serving(0);
  wrapper.signal('SIGHUP');
  const epoch1 = await wrapper.childPid(1);

  assert.deepEqual(await wrapper.exited, [1, null]);
  assert.deepEqual(wrapper.wrapperLines().slice(-6), [
    `forked new child process with PID=${epoch1}`,
    'got SIGCHLD',
    `PID=${epoch1} exited with code=3`,
    'Due to abnormal exit, force killing all child processes and exiting',
    `force killing PID=${epoch0}`,
    'exiting due to lack of child processes',
  ]);
  await waitGone(epoch0);
});

test('a child killed by a signal is an abnormal exit too', BOUNDED, async (t) => {
  const wrapper = startWrapper(t);
  const epoch0 = await wrapper.childPid(0);
  process.kill(epoch0, 'SIGKILL');

  assert.deepEqual(await wrapper.exited, [1, null]);
  assert.deepEqual(wrapper.wrapperLines().slice(-4), [
    'got SIGCHLD',
    `PID=${epoch0} was killed with signal=9`,
    'Due to abnormal exit, force killing all child processes and exiting',
    'exiting due to lack of child processes',
  ]);
});

test('when the last child exits with code 0 the wrapper exits 0', BOUNDED, async (t) => {
  const wrapper = startWrapper(t, { EXIT_AT_EPOCH: '0', EXIT_CODE: '0' });
  const epoch0 = await wrapper.childPid(0);

  assert.deepEqual(await wrapper.exited, [0, null]);
  assert.deepEqual(wrapper.wrapperLines().slice(-3), [
    'got SIGCHLD',
    `PID=${epoch0} exited with code=0`,
    'exiting due to lack of child processes',
  ]);
});

test('SIGHUPs while the newest epoch initializes make one restart, once it serves', BOUNDED, async (t) => {
  const wrapper = startWrapper(t, { HOLD_READY_AT_EPOCH: '1' });
  const target = wrapper.process.spawnargs[1];
  const epoch0 = await wrapper.serving(0);
  wrapper.signal('SIGHUP');
  const epoch1 = await wrapper.childPid(1);

  for (let n = 2; n <= 4; n++) {
    wrapper.signal('SIGHUP');
    await wrapper.waitFor(/^got SIGHUP$/, n);
  }
  await wrapper.waitFor(/^epoch 1 is still initializing: a restart already waits for it$/, 2);
  assert.ok(!wrapper.lines.some((line) => line.includes('at epoch 2')), wrapper.lines.join('\n'));
  assert.ok(!isGone(epoch0) && !isGone(epoch1));

  const epoch2 = await releaseAndTerminate(wrapper, epoch1);
  assert.deepEqual(wrapper.wrapperLines(), [
    ...firstRestartLines(target, epoch0, epoch1),
    'got SIGHUP',
    'epoch 1 is still initializing: restarting once it serves',
    'got SIGHUP',
    'epoch 1 is still initializing: a restart already waits for it',
    'got SIGHUP',
    'epoch 1 is still initializing: a restart already waits for it',
    `epoch 1 serves (PID=${epoch1})`,
    ...thirdEpochLines(epoch0, epoch1, epoch2),
  ]);
});

test('an epoch that closes its readiness descriptor without the newline no longer holds the restart', BOUNDED, async (t) => {
  const wrapper = startWrapper(t, { HOLD_READY_AT_EPOCH: '1', SILENT_AT_EPOCH: '1' });
  const target = wrapper.process.spawnargs[1];
  const epoch0 = await wrapper.serving(0);
  wrapper.signal('SIGHUP');
  const epoch1 = await wrapper.childPid(1);
  wrapper.signal('SIGHUP');
  await wrapper.waitFor(/^epoch 1 is still initializing: restarting once it serves$/);

  const epoch2 = await releaseAndTerminate(wrapper, epoch1);
  assert.deepEqual(wrapper.wrapperLines(), [
    ...firstRestartLines(target, epoch0, epoch1),
    'got SIGHUP',
    'epoch 1 is still initializing: restarting once it serves',
    `epoch 1 closed its readiness descriptor without saying it serves (PID=${epoch1}): restarts no longer wait for it`,
    ...thirdEpochLines(epoch0, epoch1, epoch2),
  ]);
});

test('the proxy: SIGHUPs while an epoch waits for its DNS cluster make one restart once it serves', { timeout: 90_000 }, async (t) => {
  const dns = await DnsTestServer.start();
  dns.zone.set('svc.test', { a: [{ address: '127.0.0.1', ttl: 60 }] });
  const upstream = await startUpstream('backend');
  const httpPort = await freePort();
  const run = HotRestarterRun.withBootstrap(
    {
      admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [routeAllListener('http_in', httpPort, 'svc')],
        clusters: [{
          name: 'svc',
          type: 'STRICT_DNS',
          connect_timeout: '1s',
          dns_lookup_family: 'V4_ONLY',
          dns_resolvers: [{ socket_address: { address: '127.0.0.1', port_value: dns.port } }],
          load_assignment: {
            cluster_name: 'svc',
            endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'svc.test', port_value: upstream.port } } } }] }],
          },
        }],
      },
    },
    ['--concurrency', '1', '--drain-time-s', '1', '--parent-shutdown-time-s', '30'],
  );
  t.after(async () => {
    await run.cleanup();
    await upstream.close();
    await dns.close();
  });
  const get = async () => (await request(`http://127.0.0.1:${httpPort}/`, { headers: { connection: 'close' } })).status;
  await run.adminOf(0);
  assert.equal(await get(), 200);

  // Epoch 1 initializes until its cluster's first resolution, which the test holds.
  dns.zone.get('svc.test')!.hold = true;
  run.signal('SIGHUP');
  // Its admin is up before its clusters initialize.
  const admin1 = await waitForFile(run, 'admin.1');
  for (let n = 1; n <= 3; n++) {
    run.signal('SIGHUP');
    await waitForLines(run, /^epoch 1 is still initializing: /gm, n);
  }
  assert.equal((await request(`${admin1}/ready`)).status, 503);
  assert.equal(await get(), 200, 'epoch 0 serves meanwhile');
  assert.ok(!run.output.includes('at epoch 2'), run.output);

  dns.zone.get('svc.test')!.hold = false;
  dns.release();
  await run.adminOf(2, 30_000);
  assert.equal(await get(), 200);
  assert.equal(run.output.match(/^forking and execing new child process at epoch \d+$/gm)?.length, 3, run.output);
  assert.equal(run.child.exitCode, null, 'the wrapper runs on');
});

/** Waits until the wrapper has printed `count` lines matching `pattern` (global, multiline). */
async function waitForLines(run: HotRestarterRun, pattern: RegExp, count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((run.output.match(pattern)?.length ?? 0) < count) {
    if (Date.now() > deadline || run.child.exitCode !== null) throw new Error(`not ${count} lines ${pattern} in:\n${run.output}`);
    await sleep(GONE_POLL_MS);
  }
}

/** The admin URL an epoch wrote to `name` in the run's dir, once written. */
async function waitForFile(run: HotRestarterRun, name: string): Promise<string> {
  const file = path.join(run.dir, name);
  const deadline = Date.now() + 20_000;
  while (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') === '') {
    if (Date.now() > deadline || run.child.exitCode !== null) throw new Error(`no ${file}:\n${run.output}`);
    await sleep(GONE_POLL_MS);
  }
  return `http://${fs.readFileSync(file, 'utf8')}`;
}
