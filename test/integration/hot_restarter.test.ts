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

const WRAPPER = path.join(__dirname, '..', '..', '..', 'scripts', 'hot-restarter');
const BOUNDED = { timeout: 20_000 };
const GONE_POLL_MS = 20;

/** The child: a sleep loop that reports its epoch and signals, and exits early when told to. */
const CHILD_PROGRAM = `
const epoch = process.env.RESTART_EPOCH;
// Handlers first: the test signals once it has read the pid line, and a SIGUSR1 that came
// before its handler would start node's inspector instead.
process.on('SIGUSR1', () => console.log(\`child epoch=\${epoch} got SIGUSR1\`));
process.on('SIGTERM', () => {
  console.log(\`child epoch=\${epoch} got SIGTERM\`);
  process.exit(0);
});
console.log(\`child epoch=\${epoch} pid=\${process.pid}\`);
if (epoch === process.env.EXIT_AT_EPOCH) process.exit(Number(process.env.EXIT_CODE));
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

  /** The first line matching `pattern`, once it has been printed. */
  async waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
    for (;;) {
      for (const line of this.lines) {
        const match = pattern.exec(line);
        if (match) return match;
      }
      if (this.ended) throw new Error(`the wrapper ended without printing ${pattern}:\n${this.lines.join('\n')}`);
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
  }

  /** The pid of the child started at `epoch`, once it runs. */
  async childPid(epoch: number): Promise<number> {
    return Number((await this.waitFor(new RegExp(`^child epoch=${epoch} pid=(\\d+)$`)))[1]);
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
  const epoch0 = await wrapper.childPid(0);

  wrapper.signal('SIGHUP');
  const epoch1 = await wrapper.childPid(1);

  wrapper.signal('SIGUSR1');
  await wrapper.waitFor(/^child epoch=0 got SIGUSR1$/);
  await wrapper.waitFor(/^child epoch=1 got SIGUSR1$/);

  wrapper.signal('SIGTERM');
  assert.deepEqual(await wrapper.exited, [0, null]);
  assert.deepEqual(wrapper.wrapperLines(), [
    `starting hot-restarter with target: ${target}`,
    'forking and execing new child process at epoch 0',
    `forked new child process with PID=${epoch0}`,
    'got SIGHUP',
    'forking and execing new child process at epoch 1',
    `forked new child process with PID=${epoch1}`,
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
  const epoch0 = await wrapper.childPid(0);
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
