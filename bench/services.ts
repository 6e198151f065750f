// Starting the proxy under test for a layer: nginx, node-http-proxy or ours, each pinned to the
// proxy CPU and each checked to answer a real request through to the upstream before any load.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedTo, type Pinning } from './cpu_pinning';
import { freePort } from './free_port';
import { type ProbeProtocol, waitUntilServing } from './http_probe';
import { type Frontend, reverseProxyConfig, startNginx, streamProxyConfig, type NginxBuild } from './nginx';
import { SMALL_BODY, SMALL_PATH, type Layer, type Subject } from './plan';
import type { ProcessGroups, StartedProcess } from './process_group';
import { proxyBootstrapYaml } from './proxy_config';
import type { BenchCertificate } from './tls_certificate';

export interface ServiceContext {
  readonly processes: ProcessGroups;
  /** Scratch directory of this run; each service gets a subdirectory. */
  readonly runDir: string;
  readonly repoRoot: string;
  readonly pinning: Pinning | null;
  readonly nginxBuild: NginxBuild;
  readonly upstreamPort: number;
  /** What the TLS layer serves; null when no TLS row runs. */
  readonly certificate: BenchCertificate | null;
}

export interface RunningService {
  /** Where wrk connects. */
  readonly port: number;
  /** The process tree charged with the rows' CPU; null when wrk talks to the upstream directly. */
  readonly process: StartedProcess | null;
}

/** A proxy that is not serving by then is reported as failed rather than waited for. */
export const START_TIMEOUT_MS = 10_000;

const PROBE_PROTOCOL: Readonly<Record<Layer, ProbeProtocol>> = { http: 'http1', tcp: 'http1', h2: 'h2', tls: 'https' };

export async function startService(context: ServiceContext, subject: Subject, layer: Layer): Promise<RunningService> {
  if (subject === 'direct') return { port: context.upstreamPort, process: null };
  const port = await freePort();
  const child = await spawnSubject(context, subject, layer, port);
  try {
    await waitUntilServing(child, { port, path: SMALL_PATH, expectedBody: SMALL_BODY, protocol: PROBE_PROTOCOL[layer] }, START_TIMEOUT_MS);
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
        layer === 'tcp' ? streamProxyConfig(dir, port, upstreamPort, context.nginxBuild) : reverseProxyConfig(dir, port, upstreamPort, frontend(context, layer));
      return startNginx(processes, layer === 'tcp' ? 'nginx stream' : 'nginx', dir, config, cpu);
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
      const certificate = context.certificate ?? undefined;
      writeFileSync(configPath, proxyBootstrapYaml({ layer, listenPort: port, upstreamPort, adminPort: await freePort(), resilient, certificate }));
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
      return processes.spawn(resilient ? 'proxy resilient' : layer === 'tcp' ? 'proxy tcp_proxy' : `proxy ${layer}`, command, args);
    }
  }
}

function frontend(context: ServiceContext, layer: Exclude<Layer, 'tcp'>): Frontend {
  if (layer !== 'tls') return { kind: layer };
  if (context.certificate === null) throw new Error('the TLS rows need a certificate');
  return { kind: 'tls', ...context.certificate };
}

// Unique per benchmark run and per instance, so neither collides with a proxy that someone else
// runs on this machine with the default base id 0.
const LAYERS: readonly Layer[] = ['http', 'tcp', 'h2', 'tls'];

function baseId(layer: Layer, resilient: boolean): number {
  return process.pid * 8 + LAYERS.indexOf(layer) * 2 + (resilient ? 1 : 0);
}
