// Running the real binary from the command line tests: to its exit, or until it serves, with a
// bounded number of processes at a time (each start costs a Node boot on a shared machine).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, PROXY_BIN, ProxyProcess, request, spawnProxy, waitFor } from './proxy_process';

export interface Exited {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs bin/proxy to its exit; killed (and failed) after `timeoutMs`. */
export async function runToExit(args: readonly string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Exited> {
  const proc = spawnProxy(args, { env: opts.env });
  // 'close' comes once the output pipes are read to their end, after 'exit'.
  const closed = once(proc.child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  const timer = setTimeout(() => void proc.cleanup(), opts.timeoutMs ?? 15_000);
  try {
    const [code, signal] = await closed;
    if (signal !== null) throw new Error(`proxy ${args.join(' ')} killed by ${signal}; stderr:\n${proc.stderr}`);
    return { code, stdout: proc.stdout, stderr: proc.stderr };
  } finally {
    clearTimeout(timer);
    await proc.cleanup();
  }
}

/** `--mode validate` and serving agree on a configuration the proxy refuses: each exits 1 with `error` in its stderr. */
export async function assertRefusedAlike(configPath: string, error: RegExp): Promise<void> {
  for (const mode of ['validate', 'serve']) {
    const result = await runToExit(['--mode', mode, '-c', configPath, '--disable-hot-restart'], { timeoutMs: 30_000 });
    assert.equal(result.code, 1, `${mode}: ${result.stderr}`);
    assert.match(result.stderr, error, mode);
  }
}

/** Runs a Node script (not necessarily bin/proxy) to its exit; killed after `timeoutMs`. */
export async function runScript(
  script: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Exited> {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: opts.timeoutMs ?? 20_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** Maps `items` through `fn`, at most `limit` at a time, keeping the order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

export interface Serving extends ProxyProcess {
  readonly adminUrl: string;
  get(pathAndQuery: string): Promise<string>;
  /** A stat's value from /stats?format=json. */
  stat(name: string): Promise<number | undefined>;
}

export interface ServeOptions {
  /** The temp dir the process owns, removed in cleanup. */
  readonly dir?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** A program that execs the proxy, e.g. `['taskset', '-c', '0']`. */
  readonly wrapper?: readonly string[];
}

/** Starts bin/proxy with `args` (which must not set --admin-address-path) and waits for /ready. */
export async function startServing(args: readonly string[], opts: ServeOptions = {}): Promise<Serving> {
  const dir = opts.dir ?? makeTempDir();
  const addressPath = path.join(dir, 'admin_address');
  const proxyArgs = [...args, '--admin-address-path', addressPath];
  const proc =
    opts.wrapper === undefined
      ? spawnProxy(proxyArgs, { dir, env: opts.env })
      : new ProxyProcess(
          spawn(opts.wrapper[0]!, [...opts.wrapper.slice(1), process.execPath, PROXY_BIN, ...proxyArgs], {
            detached: true,
            stdio: ['ignore', 'pipe', 'pipe'],
            env: { ...process.env, ...opts.env },
          }),
          dir,
        );
  try {
    const address = await waitFor('the admin address file', () => {
      if (proc.child.exitCode !== null) throw new Error(`proxy exited with ${proc.child.exitCode}`);
      return fs.existsSync(addressPath) ? fs.readFileSync(addressPath, 'utf8') : undefined;
    });
    const adminUrl = `http://${address}`;
    const get = async (pathAndQuery: string) => (await request(adminUrl + pathAndQuery)).body;
    await waitFor('/ready', async () => ((await request(`${adminUrl}/ready`)).status === 200 ? true : undefined));
    return Object.assign(proc, {
      adminUrl,
      get,
      async stat(name: string) {
        const { stats } = JSON.parse(await get('/stats?format=json')) as { stats: { name: string; value: number }[] };
        return stats.find((s) => s.name === name)?.value;
      },
    });
  } catch (error) {
    await proc.cleanup();
    throw new Error(`${(error as Error).message}\nstderr:\n${proc.stderr}`);
  }
}

/**
 * Stops a serving proxy the way an operator does (SIGTERM), so that it removes its private stats
 * region, then cleans up whatever is left.
 */
export async function stopServing(proxy: Serving): Promise<void> {
  if (proxy.child.exitCode === null && proxy.child.signalCode === null) {
    process.kill(proxy.pid, 'SIGTERM');
    await Promise.race([proxy.exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
  await proxy.cleanup();
}
