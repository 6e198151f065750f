// Every process the benchmark starts runs in its own process group, so that one kill reaches
// the process and everything it forked (nginx workers, our proxy's workers), and so that the
// benchmark can always stop what it started: on success, on error and on Ctrl-C.

import { spawn } from 'node:child_process';

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface StartedProcess {
  readonly label: string;
  readonly pid: number;
  /** Resolves when the process has exited; never rejects (a failed spawn exits with code null). */
  readonly exited: Promise<ExitStatus>;
  /** Null while running. */
  exitStatus(): ExitStatus | null;
  /** The last RETAINED_OUTPUT_CHARS of standard output. */
  stdout(): string;
  /** The last RETAINED_OUTPUT_CHARS of standard error, plus the spawn error if there was one. */
  stderr(): string;
}

export class SpawnError extends Error {
  override readonly name = 'SpawnError';
}

// Enough for a wrk report (about 1 KiB) and for the last lines of a failing proxy's log; the
// output is drained continuously so that a chatty child never blocks on a full pipe.
const RETAINED_OUTPUT_CHARS = 16 * 1024;
const STOP_GRACE_MS = 3000;

class OutputTail {
  private text = '';

  append(chunk: string): void {
    this.text = (this.text + chunk).slice(-RETAINED_OUTPUT_CHARS);
  }

  toString(): string {
    return this.text;
  }
}

export class ProcessGroups {
  private readonly running = new Set<StartedProcess>();
  private closed = false;

  /** Runs in `cwd` when given, else in this process's working directory. */
  spawn(label: string, command: string, args: readonly string[], cwd?: string): StartedProcess {
    // Once stopAll has begun, the run is ending: a start now would outlive the cleanup.
    if (this.closed) throw new SpawnError(`${label}: not started, the benchmark is stopping`);
    const child = spawn(command, args, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = new OutputTail();
    const err = new OutputTail();
    let status: ExitStatus | null = null;
    const exited = new Promise<ExitStatus>((resolve) => {
      child.on('error', (error) => {
        err.append(`${error.message}\n`);
        status ??= { code: null, signal: null };
        resolve(status);
      });
      child.on('exit', (code, signal) => {
        status = { code, signal };
        // Whatever the leader forked and left behind is ours to end, not an orphan to leak.
        if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      });
      // 'close' rather than 'exit': by then the pipes are drained and the output is complete.
      child.on('close', (code, signal) => {
        status ??= { code, signal };
        resolve(status);
      });
    });
    if (child.pid === undefined) {
      throw new SpawnError(`${label}: could not start ${command}`);
    }
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => out.append(chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => err.append(chunk));
    const started: StartedProcess = {
      label,
      pid: child.pid,
      exited,
      exitStatus: () => status,
      stdout: () => out.toString(),
      stderr: () => err.toString(),
    };
    this.running.add(started);
    void exited.then(() => this.running.delete(started));
    return started;
  }

  /**
   * SIGTERM to the leader only, so that a supervisor shuts its children down itself instead of
   * restarting them; SIGKILL to the whole group if the leader is still there after a grace period.
   */
  async stop(child: StartedProcess): Promise<void> {
    signalProcess(child.pid, 'SIGTERM');
    const timer = new Promise<'timeout'>((resolve) => setTimeout(resolve, STOP_GRACE_MS, 'timeout').unref());
    if ((await Promise.race([child.exited, timer])) === 'timeout') {
      signalGroup(child.pid, 'SIGKILL');
      await child.exited;
    }
  }

  /** Stops every process and refuses to start new ones. */
  async stopAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.running].map((child) => this.stop(child)));
  }

  /** For exit and signal handlers, which cannot wait. */
  killAllNow(): void {
    for (const child of this.running) signalGroup(child.pid, 'SIGKILL');
  }
}

/** `exited with code 1`, `was killed by SIGKILL`: the end of a sentence that names the process. */
export function describeExit(status: ExitStatus): string {
  return status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`;
}

/** The last `lines` lines of what the process wrote, after a newline; empty when it wrote nothing. */
export function outputTail(child: StartedProcess, lines: number): string {
  const output = `${child.stdout()}\n${child.stderr()}`.trim();
  return output === '' ? '' : `\n${output.split('\n').slice(-lines).join('\n')}`;
}

function signalGroup(leaderPid: number, signal: NodeJS.Signals): void {
  signalProcess(-leaderPid, signal);
}

/** A negative pid names a process group; a process or group already gone is not an error. */
function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
