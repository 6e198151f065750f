// Starting the proxy under test for a layer: nginx, node-http-proxy or ours, each pinned to the
// proxy CPU and each checked to answer a real request through to the upstream before any load.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedTo, type Pinning } from './cpu_pinning';
import { freePort } from './free_port';
import { waitUntilServing } from './http_probe';
import { reverseProxyConfig, startNginx, streamProxyConfig, type NginxBuild } from './nginx';
import { SMALL_BODY, SMALL_PATH, type Layer, type Subject } from './plan';
import type { ProcessGroups, StartedProcess } from './process_group';
import { proxyBootstrapYaml } from './proxy_config';

export interface ServiceContext {
  readonly processes: ProcessGroups;
  /** Scratch directory of this run; each service gets a subdirectory. */
  readonly runDir: string;
  readonly repoRoot: string;
  readonly pinning: Pinning | null;
  readonly nginxBuild: NginxBuild;
  readonly upstreamPort: number;
}

export interface RunningService {
  /** Where wrk connects. */
  readonly port: number;
  /** The process tree charged with the rows' CPU; null when wrk talks to the upstream directly. */
  readonly process: StartedProcess | null;
}

/** A proxy that is not serving by then is reported as failed rather than waited for. */
export const START_TIMEOUT_MS = 10_000;

export async function startService(context: ServiceContext, subject: Subject, layer: Layer): Promise<RunningService> {
  if (subject === 'direct') return { port: context.upstreamPort, process: null };
  const port = await freePort();
  const child = await spawnSubject(context, subject, layer, port);
  try {
    await waitUntilServing(child, { port, path: SMALL_PATH, expectedBody: SMALL_BODY }, START_TIMEOUT_MS);
  } catch (error) {
    await context.processes.stop(child);
    throw error;
  }
  return { port, process: child };
}

async function spawnSubject(context: ServiceContext, subject: Exclude<Subject, 'direct'>, layer: Layer, port: number): Promise<StartedProcess> {
  const { processes, pinning, upstreamPort } = context;
  const cpu = pinning?.proxyCpu ?? null;
  const dir = join(context.runDir, `${subject}-${layer}`);
  switch (subject) {
    case 'nginx': {
      const config =
        layer === 'http'
          ? reverseProxyConfig(dir, port, upstreamPort)
          : streamProxyConfig(dir, port, upstreamPort, context.nginxBuild);
      return startNginx(processes, layer === 'http' ? 'nginx' : 'nginx stream', dir, config, cpu);
    }
    case 'node': {
      const { command, args } = pinnedTo(cpu, process.execPath, [join(__dirname, 'node_http_proxy.js'), String(port), String(upstreamPort)]);
      return processes.spawn('node-http-proxy', command, args);
    }
    case 'proxy':
    case 'proxy-resilient': {
      mkdirSync(dir, { recursive: true });
      const configPath = join(dir, 'bootstrap.yaml');
      const resilient = subject === 'proxy-resilient';
      writeFileSync(configPath, proxyBootstrapYaml({ layer, listenPort: port, upstreamPort, adminPort: await freePort(), resilient }));
      const { command, args } = pinnedTo(cpu, join(context.repoRoot, 'bin', 'proxy'), [
        '-c',
        configPath,
        '--concurrency',
        '1',
        '-l',
        'warning',
        '--base-id',
        String(baseId(layer, resilient)),
        '--disable-hot-restart',
      ]);
      return processes.spawn(resilient ? 'proxy resilient' : layer === 'http' ? 'proxy' : 'proxy tcp_proxy', command, args);
    }
  }
}

// Unique per benchmark run and per instance, so neither collides with a proxy that someone else
// runs on this machine with the default base id 0.
function baseId(layer: Layer, resilient: boolean): number {
  return process.pid * 4 + (layer === 'tcp' ? 1 : 0) + (resilient ? 2 : 0);
}
