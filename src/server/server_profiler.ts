// POST /cpuprofiler or /heapprofiler across the processes of one epoch: the supervisor profiles
// itself and asks every worker to profile itself, each into its own file (profilePath). Requests
// are taken one at a time, so an enable and a disable never interleave.

import { ProcessProfiler, type ProfileKind, profilePath } from './process_profiler';
import type { WorkerPool, WorkerReply } from './worker_pool';
import { SupervisorMessage, WorkerMessage, WorkerProfileReply, WORKER_PROTOCOL_VERSION } from './worker_protocol';

export type StartOutcome =
  | { readonly kind: 'started' }
  | { readonly kind: 'already_enabled' }
  /** Nothing is left profiling: the processes that had started were stopped again. */
  | { readonly kind: 'failed'; readonly reasons: readonly string[] };

export type StopOutcome =
  | { readonly kind: 'not_enabled' }
  | { readonly kind: 'stopped'; readonly files: readonly string[]; readonly failures: readonly string[] };

export interface ServerProfilerDeps {
  readonly kind: ProfileKind;
  /** The bootstrap's admin.profile_path. */
  readonly profilePath: string;
  /** Null before the workers are forked. */
  readonly workers: () => WorkerPool | null;
  /** How long a worker may take to answer; a worker that dies meanwhile counts as an answer. */
  readonly replyTimeoutMs: number;
}

export class ServerProfiler {
  private readonly own: ProcessProfiler;
  private enabled = false;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ServerProfilerDeps) {
    this.own = new ProcessProfiler(deps.kind);
  }

  start(): Promise<StartOutcome> {
    return this.serialized(() => this.doStart());
  }

  stop(): Promise<StopOutcome> {
    return this.serialized(() => this.doStop());
  }

  private serialized<T>(step: () => Promise<T>): Promise<T> {
    const result = this.queue.then(step);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async doStart(): Promise<StartOutcome> {
    if (this.enabled) return { kind: 'already_enabled' };
    const { kind, profilePath: base } = this.deps;
    try {
      await this.own.start(profilePath(base, 'supervisor', kind));
    } catch (e) {
      return { kind: 'failed', reasons: [`supervisor: ${(e as Error).message}`] };
    }
    this.enabled = true;
    const replies = await this.askWorkers((id) => ({ v: WORKER_PROTOCOL_VERSION, type: 'profile_start', kind, id, profilePath: base }));
    const reasons = replies.flatMap((r) => (r.reply === null ? [this.noAnswer(r.index)] : r.reply.error === null ? [] : [`worker ${r.index}: ${r.reply.error}`]));
    if (reasons.length === 0) return { kind: 'started' };
    await this.doStop();
    return { kind: 'failed', reasons };
  }

  private async doStop(): Promise<StopOutcome> {
    if (!this.enabled) return { kind: 'not_enabled' };
    this.enabled = false;
    const files: string[] = [];
    const failures: string[] = [];
    try {
      const file = await this.own.stop();
      if (file !== null) files.push(file);
    } catch (e) {
      failures.push(`supervisor: ${(e as Error).message}`);
    }
    const replies = await this.askWorkers((id) => ({ v: WORKER_PROTOCOL_VERSION, type: 'profile_stop', kind: this.deps.kind, id }));
    for (const r of replies) {
      if (r.reply === null) failures.push(this.noAnswer(r.index));
      else if (r.reply.error !== null) failures.push(`worker ${r.index}: ${r.reply.error}`);
      else if (r.reply.file !== null) files.push(r.reply.file);
    }
    return { kind: 'stopped', files, failures };
  }

  private askWorkers(make: (id: number) => SupervisorMessage): Promise<WorkerReply<WorkerProfileReply>[]> {
    const workers = this.deps.workers();
    if (workers === null) return Promise.resolve([]);
    const { kind } = this.deps;
    const isReply = (m: WorkerMessage, id: number): m is WorkerProfileReply => m.type === 'profile_reply' && m.kind === kind && m.id === id;
    return workers.ask(make, isReply, this.deps.replyTimeoutMs);
  }

  private noAnswer(index: number): string {
    return `worker ${index}: not running, or no answer within ${this.deps.replyTimeoutMs} ms`;
  }
}
