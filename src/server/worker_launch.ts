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

/**
 * Node reads the file NODE_EXTRA_CA_CERTS names at each process's start, before any of our code
 * (80 ms for Debian's CA bundle on the bench machine), to extend its default CA store. No process
 * of the proxy uses that store: a TLS context verifies a peer only against its trusted_ca, which
 * Node puts in its place (src/tls/tls_context.ts), and gRPC services are plaintext. bin/proxy's
 * #! line drops it too; a supervisor started as `node bin/proxy` still has it.
 */
const WORKER_UNUSED_VARIABLES: readonly string[] = ['NODE_EXTRA_CA_CERTS'];

/** The supervisor's environment plus glibc's top pad, unless the operator set one, less what a worker does not use. */
export function workerEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const worker = { ...env };
  for (const name of WORKER_UNUSED_VARIABLES) delete worker[name];
  if (worker.MALLOC_TOP_PAD_ === undefined) worker.MALLOC_TOP_PAD_ = String(MALLOC_TOP_PAD_BYTES);
  return worker;
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
