// One process's CPU profile (POST /cpuprofiler): V8's sampling profiler through an in-process
// inspector session, so no inspector port is opened. The profile is written in the
// `.cpuprofile` JSON that Chrome DevTools and most profile viewers read.

import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { CREATED_FILE_MODE } from '../common/file_mode';

/** Which process a profile file belongs to. */
export type ProfiledProcess = 'supervisor' | { readonly worker: number };

/** `<profile_path>.supervisor.cpuprofile`, `<profile_path>.worker-<n>.cpuprofile`. */
export function cpuProfilePath(profilePath: string, owner: ProfiledProcess): string {
  return `${profilePath}.${owner === 'supervisor' ? 'supervisor' : `worker-${owner.worker}`}.cpuprofile`;
}

export class ProfilerStateError extends Error {}

interface Running {
  readonly session: Session;
  readonly file: FileHandle;
  readonly path: string;
}

export class CpuProfiler {
  private running: Running | null = null;
  /** Set between a start's first step and its end: a second start must not race it. */
  private starting = false;

  get active(): boolean {
    return this.running !== null || this.starting;
  }

  /**
   * Opens `path` for writing first (as gperftools' ProfilerStart does), so that a path that
   * cannot be written fails here rather than losing the profile at the end.
   */
  async start(path: string): Promise<void> {
    if (this.active) throw new ProfilerStateError('the CPU profiler is already running');
    this.starting = true;
    try {
      const file = await open(path, 'w', CREATED_FILE_MODE);
      const session = new Session();
      try {
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.start');
      } catch (e) {
        session.disconnect();
        await file.close();
        throw e;
      }
      this.running = { session, file, path };
    } finally {
      this.starting = false;
    }
  }

  /** Stops and writes the profile; resolves to its path, or null when none was running. */
  async stop(): Promise<string | null> {
    const running = this.running;
    if (running === null) return null;
    this.running = null;
    try {
      const { profile } = await running.session.post('Profiler.stop');
      await running.file.writeFile(JSON.stringify(profile));
      return running.path;
    } finally {
      running.session.disconnect();
      await running.file.close();
    }
  }
}
