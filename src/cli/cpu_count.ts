// How many CPUs the proxy may use: the defaults of --concurrency. Hardware threads without
// --cpuset-threads; with it, the CPUs this process is allowed to run on: its scheduler affinity
// (libuv's uv_available_parallelism reads sched_getaffinity) narrowed by the cgroup cpuset, which
// a container runtime may set without touching the affinity mask.

import * as fs from 'node:fs';
import * as os from 'node:os';

/** Hardware threads, as std::thread::hardware_concurrency counts them. */
export function hardwareThreads(): number {
  // os.cpus() is empty where /proc/cpuinfo is hidden; the affinity count is the next best.
  return os.cpus().length || os.availableParallelism();
}

/** The CPUs of this process's affinity mask and cgroup cpuset, whichever is smaller. */
export function cpusetThreads(): number {
  const affinity = os.availableParallelism();
  const cgroup = cgroupCpusetSize(readOptional('/proc/self/cgroup') ?? '');
  return cgroup === null ? affinity : Math.min(affinity, cgroup);
}

/** The effective cpuset of this process's cgroup (v2, else v1), or null when none is readable. */
function cgroupCpusetSize(procSelfCgroup: string): number | null {
  for (const file of cpusetFiles(procSelfCgroup)) {
    const list = readOptional(file);
    if (list === null) continue;
    const size = cpuListSize(list);
    if (size > 0) return size;
  }
  return null;
}

/**
 * Where the effective cpuset of the cgroups named in /proc/self/cgroup may be read: the unified
 * (v2) hierarchy's `cpuset.cpus.effective`, then the v1 cpuset controller's `effective_cpus`.
 */
export function cpusetFiles(procSelfCgroup: string): string[] {
  const files: string[] = [];
  for (const line of procSelfCgroup.split('\n')) {
    // hierarchy-id:controllers:path, e.g. `0::/system.slice/proxy.service` or `3:cpuset:/`.
    const match = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (match === null) continue;
    const [, id, controllers, cgroupPath] = match;
    const dir = cgroupPath === '/' ? '' : cgroupPath;
    if (id === '0' && controllers === '') files.unshift(`/sys/fs/cgroup${dir}/cpuset.cpus.effective`);
    else if (controllers.split(',').includes('cpuset')) files.push(`/sys/fs/cgroup/cpuset${dir}/cpuset.effective_cpus`);
  }
  return files;
}

/** The number of CPUs in a kernel CPU list such as `0-3,8,10-11`; 0 for an empty or bad list. */
export function cpuListSize(list: string): number {
  let count = 0;
  for (const part of list.trim().split(',')) {
    if (part === '') continue;
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (range === null) return 0;
    const first = Number(range[1]);
    const last = range[2] === undefined ? first : Number(range[2]);
    if (last < first) return 0;
    count += last - first + 1;
  }
  return count;
}

function readOptional(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
