// Starting the proxy under test for a layer: nginx, node-http-proxy or ours (from this checkout or
// another build), each pinned to the proxy CPU and each checked to answer a real request through
// to the upstream before any load.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedTo, type Pinning } from './cpu_pinning';
import { freePort } from './free_port';
import { type ProbeProtocol, waitUntilServing } from './http_probe';
import { type Frontend, reverseProxyConfig, startNginx, streamProxyConfig, type NginxBuild } from './nginx';
import { SMALL_BODY, SMALL_PATH, type Layer, type Subject } from './plan';
import type { ProcessGroups, StartedProcess } from './process_group';
import { type BenchHttpFilter, proxyBootstrapYaml } from './proxy_config';
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
  const cpu = context.pinning?.proxyCpu ?? null;
  if (subject === 'proxy' || subject === 'proxy-features') {
    const dir = join(context.runDir, `${subject}-${layer}`);
    const launch = await writeProxyLaunch(dir, subject, layer, context.upstreamPort, context.certificate);
    return startProxy(context.processes, launch, context.repoRoot, cpu);
  }
  const port = await freePort();
  return serving(context.processes, spawnReference(context, subject, layer, port, cpu), port, layer);
}

/** How our proxy runs for one layer: its bootstrap file, where that and its admin listen, its base id. */
export interface ProxyLaunch {
  readonly label: string;
  readonly layer: Layer;
  readonly port: number;
  readonly adminPort: number;
  readonly configPath: string;
  readonly baseId: number;
}

/** Writes the bootstrap into `dir` (created); the ports are chosen here, once. */
export async function writeProxyLaunch(
  dir: string,
  subject: 'proxy' | 'proxy-features',
  layer: Layer,
  upstreamPort: number,
  certificate: BenchCertificate | null,
  variant: {
    readonly accessLogPath?: string;
    readonly routeCount?: number;
    readonly httpFilters?: readonly BenchHttpFilter[];
    readonly profilePath?: string;
    readonly reusePort?: boolean;
    readonly exactBalance?: boolean;
  } = {},
): Promise<ProxyLaunch> {
  mkdirSync(dir, { recursive: true });
  const configPath = join(dir, 'bootstrap.yaml');
  const features = subject === 'proxy-features';
  const port = await freePort();
  const adminPort = await freePort();
  // The features row logs every request, as an operator's proxy does.
  const accessLogPath = features ? join(dir, 'access.log') : undefined;
  writeFileSync(
    configPath,
    proxyBootstrapYaml({ layer, listenPort: port, upstreamPort, adminPort, features, accessLogPath, certificate: certificate ?? undefined, ...variant }),
  );
  const label = features ? 'proxy features' : layer === 'tcp' ? 'proxy tcp_proxy' : `proxy ${layer}`;
  return { label, layer, port, adminPort, configPath, baseId: baseId(layer, features) };
}

/**
 * Runs `bin/proxy` of the checkout at `root` (its own dist/ and addon) on the launch's
 * bootstrap with `concurrency` workers, and waits until it serves. The label names the process in errors.
 */
export async function startProxy(
  processes: ProcessGroups,
  launch: ProxyLaunch,
  root: string,
  cpu: number | null,
  label = launch.label,
  concurrency = 1,
): Promise<RunningService> {
  const { command, args } = pinnedTo(cpu, join(root, 'bin', 'proxy'), [
    '-c',
    launch.configPath,
    '--concurrency',
    String(concurrency),
    '-l',
    'warning',
    '--base-id',
    String(launch.baseId),
    '--disable-hot-restart',
  ]);
  return serving(processes, processes.spawn(label, command, args), launch.port, launch.layer);
}

/** The service once it answers the layer's probe on `port`; stopped, and an error, if it does not. */
async function serving(processes: ProcessGroups, child: StartedProcess, port: number, layer: Layer): Promise<RunningService> {
  try {
    await waitUntilServing(child, { port, path: SMALL_PATH, expectedBody: SMALL_BODY, protocol: PROBE_PROTOCOL[layer] }, START_TIMEOUT_MS);
  } catch (error) {
    await processes.stop(child);
    throw error;
  }
  return { port, process: child };
}

/** The reference proxies, nginx and node-http-proxy. */
function spawnReference(context: ServiceContext, subject: 'nginx' | 'node', layer: Layer, port: number, cpu: number | null): StartedProcess {
  const { processes, upstreamPort } = context;
  const dir = join(context.runDir, `${subject}-${layer}`);
  if (subject === 'node') {
    const { command, args } = pinnedTo(cpu, process.execPath, [join(__dirname, 'node_http_proxy.js'), String(port), String(upstreamPort)]);
    return processes.spawn('node-http-proxy', command, args);
  }
  const config =
    layer === 'tcp' ? streamProxyConfig(dir, port, upstreamPort, context.nginxBuild) : reverseProxyConfig(dir, port, upstreamPort, frontend(context, layer));
  return startNginx(processes, layer === 'tcp' ? 'nginx stream' : 'nginx', dir, config, cpu);
}

function frontend(context: ServiceContext, layer: Exclude<Layer, 'tcp'>): Frontend {
  if (layer !== 'tls') return { kind: layer };
  if (context.certificate === null) throw new Error('the TLS rows need a certificate');
  return { kind: 'tls', ...context.certificate };
}

// Unique per benchmark run and per instance, so neither collides with a proxy that someone else
// runs on this machine with the default base id 0.
const LAYERS: readonly Layer[] = ['http', 'tcp', 'h2', 'tls'];

function baseId(layer: Layer, features: boolean): number {
  return process.pid * 8 + LAYERS.indexOf(layer) * 2 + (features ? 1 : 0);
}
