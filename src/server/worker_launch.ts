// How the supervisor launches a worker process: the Node flags and the environment it runs with.

import { ChildProcess, fork } from 'node:child_process';
import * as path from 'node:path';

/**
 * None of the supervisor's own flags (--inspect and the like). V8 starts a major GC whenever the
 * old generation's headroom falls under the young generation's capacity: at the default 16 MiB
 * semi-space a worker proxying 16 KiB responses at full load (10 MiB old, 35 MiB limit) ran a
 * Mark-Compact every 60 ms from about 9 s on; at 8 MiB, none.
 */
export const WORKER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/**
 * glibc hands freed heap back to the kernel once 128 KiB of it sits at the top. A worker frees
 * tens of MiB of body buffers at each young-generation GC and allocates them again within
 * milliseconds, so every page came back through a page fault: about one per 16 KiB response, a
 * tenth of the worker's CPU. Keeping 64 MiB of free heap stops that.
 */
const MALLOC_TOP_PAD_BYTES = 64 * 1024 * 1024;

/** The supervisor's environment plus glibc's top pad, unless the operator set one. */
export function workerEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.MALLOC_TOP_PAD_ !== undefined) return env;
  return { ...env, MALLOC_TOP_PAD_: String(MALLOC_TOP_PAD_BYTES) };
}

const WORKER_ENTRY = path.join(__dirname, 'worker_entry.js');

/**
 * A worker process, loading its code until its init comes. It inherits no listen socket: the
 * supervisor forks its workers before it has decoded the configuration, and hands each its
 * sockets with its start (listen_socket_handoff.ts).
 */
export function forkWorker(): ChildProcess {
  return fork(WORKER_ENTRY, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
    execArgv: [...WORKER_NODE_FLAGS],
    env: workerEnvironment(process.env),
  });
}
