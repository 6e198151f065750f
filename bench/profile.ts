// `make bench-profile`: where the request path's CPU goes. A row's proxy carries its load,
// pinned as `make bench` pins it, while the admin's /cpuprofiler records; the worker's profile is
// summarized as its top self-time entries. By default the row is the features row (a file access
// log, health checks, circuit breakers, outlier detection, a retry policy, LEAST_REQUEST) under
// wrk's 13-byte requests, written to bench/l7_profile.txt; PROFILE_ROW, PROFILE_FILTERS,
// PROFILE_TOP and PROFILE_OUT choose otherwise (bench/profile_settings.ts). BENCH_DURATION sets
// the recorded seconds (10 by default).

import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describePinning } from './cpu_pinning';
import { requestBodyFile, runH2load } from './h2load';
import { runMain } from './interrupt';
import type { LoadResult } from './load_result';
import { H2_STREAMS } from './measure';
import { type Layer, PACED_MS, POST_BODY_BYTES, SMALL_PATH } from './plan';
import { formatProfileSummary, summarizeCpuProfile, type CpuProfile } from './profile_summary';
import { sourceMapPlaces } from './source_map_places';
import { readProfileSettings, type ProfileSettings } from './profile_settings';
import { startProxy, writeProxyLaunch } from './services';
import { startBenchUpstream, withSession } from './session';
import { makeCertificate } from './tls_certificate';
import { runWrk } from './wrk';

const REPO_ROOT = resolve(__dirname, '..', '..');

const ROW_TITLES: Record<ProfileSettings['row'], string> = {
  features: "the worker of `make bench`'s features row (proxy-features), HTTP/1.1",
  paced: "the worker of `make bench`'s features row (proxy-features) under the paced row's load, HTTP/1.1",
  http: 'the worker of the L7 route and router row, HTTP/1.1',
  h2: 'the worker of the HTTP/2 downstream row, h2load',
  'h2-post': `the worker of the HTTP/2 downstream row, h2load posting ${POST_BODY_BYTES}-byte bodies`,
  tls: 'the worker of the TLS termination row (keep-alive), HTTP/1.1 over TLS',
  tcp: 'the worker of the tcp_proxy row (L4), HTTP/1.1 through it',
};

const ROW_LAYERS: Record<ProfileSettings['row'], Layer> = { features: 'http', paced: 'http', http: 'http', h2: 'h2', 'h2-post': 'h2', tls: 'tls', tcp: 'tcp' };

async function main(): Promise<number> {
  const settings = readProfileSettings(process.env, REPO_ROOT);
  const { row, load, filters } = settings;
  return withSession(async (session) => {
    const { processes, runDir, pinning } = session;
    const upstreamPort = await startBenchUpstream(session);
    const profileBase = join(runDir, 'profile');
    const variant = { profilePath: profileBase, httpFilters: filters };
    const layer = ROW_LAYERS[row];
    const certificate = layer === 'tls' ? makeCertificate(runDir) : null;
    const launch = await writeProxyLaunch(join(runDir, 'proxy'), row === 'features' || row === 'paced' ? 'proxy-features' : 'proxy', layer, upstreamPort, certificate, variant);
    await startProxy(processes, launch, REPO_ROOT, pinning?.proxyCpu ?? null);
    const url = `${layer === 'tls' ? 'https' : 'http'}://127.0.0.1:${launch.port}${SMALL_PATH}`;
    const cpu = pinning?.loadCpu ?? null;
    const bodyPath = row === 'h2-post' ? requestBodyFile(runDir, POST_BODY_BYTES) : undefined;
    const run = (durationSeconds: number): Promise<LoadResult> =>
      layer === 'h2'
        ? runH2load(processes, { url, connections: load.connections, streams: H2_STREAMS, durationSeconds, cpu, bodyPath })
        : runWrk(processes, { url, connections: load.connections, threads: load.threads, durationSeconds, cpu, pacedMs: row === 'paced' ? PACED_MS : undefined });
    await run(load.warmupSeconds);
    await profiler(launch.adminPort, 'y');
    const result = await run(load.durationSeconds);
    const files = await profiler(launch.adminPort, 'n');
    const workerFile = files.find((file) => file.endsWith('.worker-0.cpuprofile'));
    if (workerFile === undefined) throw new Error(`no worker profile among ${files.join(', ')}`);
    const summary = summarizeCpuProfile(JSON.parse(readFileSync(workerFile, 'utf8')) as CpuProfile, settings.top, sourceMapPlaces(REPO_ROOT));
    const generator =
      layer === 'h2' ? `h2load -c${load.connections} -m${H2_STREAMS}` : `wrk -t${load.threads} -c${load.connections}${row === 'paced' ? `, each connection waiting ${PACED_MS} ms between requests` : ''}`;
    const text =
      `# The request path's CPU profile: ${ROW_TITLES[row]}${filters.length > 0 ? `, with ${filters.join(', ')} before the router` : ''},\n` +
      `# 13-byte body, ${generator} for ${load.durationSeconds} s, ${describePinning(pinning)}.\n` +
      `# Top ${settings.top} entries by self time; written by \`make bench-profile\` (bench/profile.ts) at ${new Date().toISOString()}.\n` +
      `# ${Math.round(result.requestsPerSecond).toLocaleString('en-US')} requests/s while recording.\n\n` +
      formatProfileSummary(summary, result.requests);
    writeFileSync(settings.out, text);
    process.stdout.write(`${text}\nwritten to ${relative(process.cwd(), settings.out)}\n`);
    return 0;
  });
}

/** POST /cpuprofiler?enable=<y|n>; disabling answers with the files written, one a line. */
async function profiler(adminPort: number, enable: 'y' | 'n'): Promise<string[]> {
  const response = await fetch(`http://127.0.0.1:${adminPort}/cpuprofiler?enable=${enable}`, { method: 'POST' });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`POST /cpuprofiler?enable=${enable}: ${response.status} ${body.trim()}`);
  return body.split('\n').filter((line) => line !== '' && line !== 'OK');
}

runMain('bench-profile', main);
