// One process's V8 profile (POST /cpuprofiler, /heapprofiler) through an in-process inspector
// session, so no inspector port is opened: the CPU profiler samples stacks; the heap profiler
// samples allocations (V8's sampling heap profiler, as gperftools' heap profiler samples). Each
// is written as the JSON Chrome DevTools and most profile viewers read: `.cpuprofile`,
// `.heapprofile`.

import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { CREATED_FILE_MODE } from '../common/file_mode';
import { Session } from 'node:inspector/promises';

export type ProfileKind = 'cpu' | 'heap';

/** Which process a profile file belongs to. */
export type ProfiledProcess = 'supervisor' | { readonly worker: number };

interface ProfilerProtocol {
  readonly name: string;
  readonly extension: string;
  readonly start: (session: Session) => Promise<void>;
  /** Stops, and resolves to the profile. */
  readonly stop: (session: Session) => Promise<object>;
}

const PROTOCOLS: Readonly<Record<ProfileKind, ProfilerProtocol>> = {
  cpu: {
    name: 'CPU profiler',
    extension: 'cpuprofile',
    start: async (session) => {
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    },
    stop: async (session) => (await session.post('Profiler.stop')).profile,
  },
  heap: {
    name: 'heap profiler',
    extension: 'heapprofile',
    start: async (session) => {
      await session.post('HeapProfiler.enable');
      await session.post('HeapProfiler.startSampling');
    },
    stop: async (session) => (await session.post('HeapProfiler.stopSampling')).profile,
  },
};

/** `<profile_path>.supervisor.cpuprofile`, `<profile_path>.worker-<n>.heapprofile`. */
export function profilePath(base: string, owner: ProfiledProcess, kind: ProfileKind): string {
  return `${base}.${owner === 'supervisor' ? 'supervisor' : `worker-${owner.worker}`}.${PROTOCOLS[kind].extension}`;
}

export class ProfilerStateError extends Error {}

interface Running {
  readonly session: Session;
  readonly file: FileHandle;
  readonly path: string;
}

export class ProcessProfiler {
  private running: Running | null = null;
  /** Set between a start's first step and its end: a second start must not race it. */
  private starting = false;

  constructor(readonly kind: ProfileKind) {}

  get active(): boolean {
    return this.running !== null || this.starting;
  }

  /**
   * Opens `path` for writing first (as gperftools' ProfilerStart does), so that a path that
   * cannot be written fails here rather than losing the profile at the end.
   */
  async start(path: string): Promise<void> {
    const protocol = PROTOCOLS[this.kind];
    if (this.active) throw new ProfilerStateError(`the ${protocol.name} is already running`);
    this.starting = true;
    try {
      const file = await open(path, 'w', CREATED_FILE_MODE);
      const session = new Session();
      try {
        session.connect();
        await protocol.start(session);
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
      const profile = await PROTOCOLS[this.kind].stop(running.session);
      await running.file.writeFile(JSON.stringify(profile));
      return running.path;
    } finally {
      running.session.disconnect();
      await running.file.close();
    }
  }
}
