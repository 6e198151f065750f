// `make bench-profile`: where the L7 request path's CPU goes. The features row's proxy (a file
// access log, health checks, circuit breakers, outlier detection, a retry policy,
// LEAST_REQUEST) carries wrk's 13-byte requests, pinned as `make bench` pins it, while the
// admin's /cpuprofiler records; the worker's profile is summarized as its top self-time entries
// into bench/l7_profile.txt (PROFILE_OUT to write elsewhere). BENCH_DURATION sets the recorded
// seconds (10 by default).

import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describePinning } from './cpu_pinning';
import { runMain } from './interrupt';
import { SMALL_PATH } from './plan';
import { formatProfileSummary, summarizeCpuProfile, type CpuProfile } from './profile_summary';
import { startProxy, writeProxyLaunch } from './services';
import { startBenchUpstream, withSession } from './session';
import { readLoadSettings } from './settings';
import { runWrk } from './wrk';

const REPO_ROOT = resolve(__dirname, '..', '..');
const TOP_ENTRIES = 30;

async function main(): Promise<number> {
  const settings = readLoadSettings(process.env);
  const out = process.env.PROFILE_OUT ?? join(REPO_ROOT, 'bench', 'l7_profile.txt');
  return withSession(async (session) => {
    const { processes, runDir, pinning } = session;
    const upstreamPort = await startBenchUpstream(session);
    const profileBase = join(runDir, 'profile');
    const launch = await writeProxyLaunch(join(runDir, 'proxy'), 'proxy-features', 'http', upstreamPort, null, { profilePath: profileBase });
    await startProxy(processes, launch, REPO_ROOT, pinning?.proxyCpu ?? null);
    const load = { url: `http://127.0.0.1:${launch.port}${SMALL_PATH}`, connections: settings.connections, threads: settings.threads, cpu: pinning?.loadCpu ?? null };
    await runWrk(processes, { ...load, durationSeconds: settings.warmupSeconds });
    await profiler(launch.adminPort, 'y');
    const result = await runWrk(processes, { ...load, durationSeconds: settings.durationSeconds });
    const files = await profiler(launch.adminPort, 'n');
    const workerFile = files.find((file) => file.endsWith('.worker-0.cpuprofile'));
    if (workerFile === undefined) throw new Error(`no worker profile among ${files.join(', ')}`);
    const summary = summarizeCpuProfile(JSON.parse(readFileSync(workerFile, 'utf8')) as CpuProfile, TOP_ENTRIES);
    const text =
      `# The L7 request path's CPU profile: the worker of \`make bench\`'s features row (proxy-features),\n` +
      `# HTTP/1.1, 13-byte body, wrk -t${settings.threads} -c${settings.connections} for ${settings.durationSeconds} s, ${describePinning(pinning)}.\n` +
      `# Top ${TOP_ENTRIES} entries by self time; written by \`make bench-profile\` (bench/profile.ts) at ${new Date().toISOString()}.\n` +
      `# ${Math.round(result.requestsPerSecond).toLocaleString('en-US')} requests/s while recording.\n\n` +
      formatProfileSummary(summary, result.requests);
    writeFileSync(out, text);
    process.stdout.write(`${text}\nwritten to ${relative(process.cwd(), out)}\n`);
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
