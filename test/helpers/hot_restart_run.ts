// Runs the proxy the way operators do: scripts/hot-restarter over a start script that passes
// RESTART_EPOCH, with a per-epoch admin address file so a test can talk to each epoch.

import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { posixSharedMemory, sharedRegionName } from '../../src/shared_memory/posix_shared_memory';
import { StatsRegion } from '../../src/shared_memory/region';
import { giveUpAfter, livePidsWhere, makeTempDir, PROXY_BIN, request, sleep, waitFor } from './proxy_process';

export const HOT_RESTARTER = path.resolve(__dirname, '..', '..', '..', 'scripts', 'hot-restarter');

/** Base ids each test process may hand out: its own range, so no two live processes share one. */
const BASE_IDS_PER_PROCESS = 20;
let baseIdsHandedOut = 0;

/**
 * A base id no other test or proxy on this machine uses: from this process's range (by pid), a
 * new one per call. A random one collided, one run in a few dozen, with another test's live
 * proxy ("unable to bind domain socket").
 */
export function uniqueBaseId(): number {
  if (baseIdsHandedOut === BASE_IDS_PER_PROCESS) throw new Error(`a test process gets ${BASE_IDS_PER_PROCESS} base ids`);
  return 100_000 + (process.pid % 100_000) * BASE_IDS_PER_PROCESS + baseIdsHandedOut++;
}

/** A start script as scripts/start-proxy.sh is one: its arguments are appended (reload-proxy's `--mode validate`). */
export function writeStartScript(dir: string, configPath: string, baseId: number, extraArgs: readonly string[]): string {
  const script = path.join(dir, 'start-proxy.sh');
  const args = [
    '-c', configPath,
    '--base-id', String(baseId),
    '--admin-address-path', `${dir}/admin.$RESTART_EPOCH`,
    '--log-path', `${dir}/proxy.$RESTART_EPOCH.log`,
    ...extraArgs,
  ];
  const quoted = args.map((a) => (a.includes('$RESTART_EPOCH') ? `"${a}"` : `'${a}'`)).join(' ');
  fs.writeFileSync(script, `#!/bin/sh\nexec '${process.execPath}' '${PROXY_BIN}' ${quoted} "$@"\n`, { mode: 0o755 });
  return script;
}

export class HotRestarterRun {
  output = '';
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess, readonly dir: string, readonly baseId: number) {
    child.stdout!.on('data', (c: Buffer) => (this.output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (this.output += c.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /**
   * Writes `config` (or what it returns for the run's dir, for files the bootstrap names) as the
   * bootstrap of a new temp dir and starts the wrapper over a start script with `extraArgs`;
   * cleanup() removes the dir.
   */
  static withBootstrap(config: Record<string, unknown> | ((dir: string) => Record<string, unknown>), extraArgs: readonly string[]): HotRestarterRun {
    const dir = makeTempDir();
    const configPath = path.join(dir, 'bootstrap.json');
    fs.writeFileSync(configPath, JSON.stringify(typeof config === 'function' ? config(dir) : config));
    const baseId = uniqueBaseId();
    return HotRestarterRun.start(dir, writeStartScript(dir, configPath, baseId, extraArgs), baseId);
  }

  /** `env` adds to this process's environment, as a unit's EnvironmentFile= does. */
  static start(dir: string, startScript: string, baseId: number, env: NodeJS.ProcessEnv = {}): HotRestarterRun {
    const child = spawn(HOT_RESTARTER, [startScript], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, ...env },
    });
    return new HotRestarterRun(child, dir, baseId);
  }

  /** The admin URL of `epoch` once that epoch answers /ready with 200. */
  async adminOf(epoch: number, timeoutMs = 20_000): Promise<string> {
    const file = path.join(this.dir, `admin.${epoch}`);
    try {
      return await waitFor(
        `epoch ${epoch} to serve`,
        async () => {
          if (!fs.existsSync(file)) return undefined;
          const url = `http://${fs.readFileSync(file, 'utf8')}`;
          return (await request(`${url}/ready`)).status === 200 ? url : undefined;
        },
        timeoutMs,
      );
    } catch (e) {
      // What the epoch and the restarter said is what tells a slow start from a stuck one.
      const tail = (text: string) => text.split('\n').slice(-30).join('\n');
      throw new Error(`${(e as Error).message}\nepoch ${epoch} log:\n${tail(this.log(epoch))}\nhot-restarter:\n${tail(this.output)}`);
    }
  }

  /** The supervisors of the live epochs: the wrapper's children. */
  supervisorPids(): number[] {
    return livePidsWhere((stat) => stat.ppid === this.child.pid);
  }

  /** The workers of the supervisor `supervisorPid`. */
  workerPids(supervisorPid: number): number[] {
    return livePidsWhere((stat) => stat.ppid === supervisorPid);
  }

  log(epoch: number): string {
    const file = path.join(this.dir, `proxy.${epoch}.log`);
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  }

  signal(sig: NodeJS.Signals): void {
    this.child.kill(sig);
  }

  /** SIGTERM to the wrapper (which stops every epoch), then SIGKILL to the group if needed. */
  async cleanup(): Promise<void> {
    if (this.child.exitCode === null) {
      this.child.kill('SIGTERM');
      await Promise.race([this.exited, giveUpAfter(10_000)]);
    }
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
    StatsRegion.unlinkStale(posixSharedMemory, sharedRegionName(this.baseId));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export async function statsOf(adminUrl: string): Promise<Map<string, number>> {
  const body = JSON.parse((await request(`${adminUrl}/stats?format=json`)).body) as { stats: { name: string; value: number }[] };
  return new Map(body.stats.map((s) => [s.name, s.value]));
}

/**
 * `loops` concurrent loops calling `once` until stop(), which resolves to every answer in order
 * of completion (a throw is recorded as its message): the traffic a test runs across restarts.
 */
export function runLoad(loops: number, once: () => Promise<string>): { stop(): Promise<string[]> } {
  let running = true;
  const answers: string[] = [];
  const all = Array.from({ length: loops }, async () => {
    while (running) {
      try {
        answers.push(await once());
      } catch (e) {
        answers.push(String(e));
      }
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(all);
      return answers;
    },
  };
}

/**
 * `loops` loops of `once` through a SIGHUP: resolves to the new epoch's admin URL once it is up
 * and the load has stopped, having checked that there were answers and every one was `expected`.
 */
export async function restartUnderLoad(run: HotRestarterRun, loops: number, once: () => Promise<string>, expected: string): Promise<string> {
  const load = runLoad(loops, once);
  run.signal('SIGHUP');
  const admin = await run.adminOf(1);
  const answers = await load.stop();
  assert.ok(answers.length > 0);
  assert.deepEqual(new Set(answers), new Set([expected]));
  return admin;
}

export { sleep };
