// Starts the real proxy binary for integration tests: config in a temp dir, admin on port 0
// (read back from --admin-address-path), listeners on port 0 (read back from /listeners),
// and a process group that is always killed in cleanup.

import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { privateRegionObjects, reclaimDeadPrivateRegions, shmEntries } from '../../src/shared_memory/private_regions';
import { posixSharedMemory } from '../../src/shared_memory/posix_shared_memory';
import { processAlive } from '../../src/shared_memory/process_alive';

export const PROXY_BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'proxy');

export interface HttpResult {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export function request(
  url: string,
  opts: { method?: string; headers?: http.OutgoingHttpHeaders; body?: string | Buffer; agent?: http.Agent } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: opts.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(15_000, () => req.destroy(new Error(`request to ${url} timed out`)));
    req.end(opts.body);
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Resolves after `ms` without keeping the process alive: the bound of a wait raced against it. */
export function giveUpAfter(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(50);
  }
}

/** The fields of /proc/<pid>/stat that tests select processes by. */
export interface ProcStat {
  readonly ppid: number;
  readonly pgrp: number;
}

/** Every process, zombies aside, whose /proc/<pid>/stat satisfies `match`. */
export function livePidsWhere(match: (stat: ProcStat) => boolean): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name: state, ppid, pgrp, ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z' && match({ ppid: Number(fields[1]), pgrp: Number(fields[2]) })) out.push(Number(entry));
    } catch {
      // The process exited between readdir and read.
    }
  }
  return out;
}

/**
 * Removes the stats region that the proxy `pid`, killed with SIGKILL (and reaped), left in
 * /dev/shm, as the next proxy to start would: a test run leaves none behind. Only that one: a
 * test running in parallel may be leaving another dead proxy's region for its next start.
 */
export function reclaimKilledProxyRegion(pid: number): void {
  const own = (): string[] => shmEntries().filter((entry) => privateRegionObjects([entry]).has(pid));
  reclaimDeadPrivateRegions({ memory: posixSharedMemory, ownPid: process.pid, alive: processAlive, entries: own });
}

export interface ExitResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class ProxyProcess {
  stdout = '';
  stderr = '';
  /**
   * The exit, once stdout and stderr are read to their end ('close'): 'exit' can come before
   * the last lines, and the workers, which share the pipes, are gone by then too.
   */
  readonly exited: Promise<ExitResult>;

  constructor(readonly child: ChildProcess, readonly dir: string) {
    child.stdout!.on('data', (c: Buffer) => (this.stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Every live process of the proxy's process group (supervisor and workers). */
  groupPids(): number[] {
    return livePidsWhere((stat) => stat.pgrp === this.pid);
  }

  /**
   * Stops the proxy (SIGTERM first, so it removes its shared memory region), then kills
   * whatever is left of the group, removes the region a killed supervisor leaves, and removes
   * the temp dir. Safe to call twice.
   */
  async cleanup(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      await Promise.race([this.exited, giveUpAfter(5000)]);
    }
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    await Promise.race([this.exited, giveUpAfter(5000)]);
    reclaimKilledProxyRegion(this.pid);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface RunningProxy extends ProxyProcess {
  readonly adminUrl: string;
  /** Sends the admin headers startProxy was given (a bearer token, say). */
  admin(pathAndQuery: string, method?: string): Promise<HttpResult>;
  listenerPort(name: string): Promise<number>;
  stat(name: string): Promise<number | undefined>;
}

/** The proxy's listener ports, in the order its configuration lists them (for listeners without names, as Envoy's examples have). */
export async function listenerPorts(proxy: RunningProxy): Promise<number[]> {
  const lines = (await proxy.admin('/listeners')).body.split('\n').filter((line) => line !== '');
  return lines.map((line) => Number(line.slice(line.lastIndexOf(':') + 1)));
}

export function makeTempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-test-'));
}

/** Spawns bin/proxy with the given args in its own process group; `dir` is removed in cleanup. */
export function spawnProxy(args: readonly string[], opts: { dir?: string; env?: NodeJS.ProcessEnv } = {}): ProxyProcess {
  const dir = opts.dir ?? makeTempDir();
  const child = spawn(process.execPath, [PROXY_BIN, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env },
  });
  return new ProxyProcess(child, dir);
}

/** The port listener `name` is bound to, from the admin's /listeners. */
export async function listenerPort(adminUrl: string, name: string, headers: http.OutgoingHttpHeaders = {}): Promise<number> {
  const listeners = (await request(`${adminUrl}/listeners`, { headers })).body.split('\n');
  const line = listeners.find((l) => l.startsWith(`${name}::`));
  if (!line) throw new Error(`no listener ${name} in /listeners`);
  return Number(line.slice(line.lastIndexOf(':') + 1));
}

/**
 * Starts a serving proxy on `config` (a bootstrap object) and waits for /ready. The admin block
 * is filled in (127.0.0.1:0, access log in the temp dir) unless the config has one.
 * `startTimeoutMs` bounds each wait (the admin address, then /ready); `env` is added to ours.
 * `adminHeaders` go with every admin request the helper makes (a bearer token for admin.security).
 */
export async function startProxy(
  config: Record<string, unknown>,
  args: readonly string[] = [],
  startTimeoutMs = 15_000,
  env: NodeJS.ProcessEnv = {},
  adminHeaders: http.OutgoingHttpHeaders = {},
): Promise<RunningProxy> {
  const dir = makeTempDir();
  const admin = config.admin ?? {
    access_log_path: path.join(dir, 'admin_access.log'),
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
  };
  const configPath = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(configPath, JSON.stringify({ ...config, admin }, null, 1));
  const addressPath = path.join(dir, 'admin_address');
  const proc = spawnProxy(['-c', configPath, '--admin-address-path', addressPath, '--disable-hot-restart', '--concurrency', '1', ...args], { dir, env });
  try {
    const address = await waitFor('the admin address file', () => {
      if (proc.child.exitCode !== null) throw new Error(`proxy exited with ${proc.child.exitCode}: ${proc.stderr}`);
      // The file can be seen created and not yet written.
      const written = fs.existsSync(addressPath) ? fs.readFileSync(addressPath, 'utf8') : '';
      return written === '' ? undefined : written;
    }, startTimeoutMs);
    const adminUrl = `http://${address}`;
    const running = Object.assign(proc, {
      adminUrl,
      admin: (pq: string, method = 'GET') => request(adminUrl + pq, { method, headers: adminHeaders }),
      listenerPort: (name: string) => listenerPort(adminUrl, name, adminHeaders),
      async stat(name: string): Promise<number | undefined> {
        const stats = JSON.parse((await request(`${adminUrl}/stats?format=json`, { headers: adminHeaders })).body) as { stats: { name: string; value: number }[] };
        return stats.stats.find((s) => s.name === name)?.value;
      },
    });
    await waitFor('/ready', async () => ((await running.admin('/ready')).status === 200 ? true : undefined), startTimeoutMs);
    return running;
  } catch (e) {
    await proc.cleanup();
    throw new Error(`${(e as Error).message}\nstderr:\n${proc.stderr}`);
  }
}
