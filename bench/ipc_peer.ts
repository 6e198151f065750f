// The far end of bench/ipc_channel.ts: a worker's side of one channel, answering as a worker
// would. `child_process`: Node's IPC channel, forked with advanced serialization as the
// supervisor forks its workers; `node-ipc <socket path>`: a node-ipc client of that socket.
//
// Not run by hand: ipc_channel.js starts it.

import type { Bootstrap } from '../src/config/model';
import { decodeWorkerBootstrap, WORKER_PROTOCOL_VERSION, WorkerInit, WorkerMemory, WorkerMemoryRequest, WorkerShutdown } from '../src/server/worker_protocol';
import { loadNodeIpc } from './node_ipc';

/** The worker's init, its bootstrap either the V8 bytes the supervisor sends or, over JSON, the model itself. */
export type BenchInit = Omit<WorkerInit, 'bootstrap'> & { readonly bootstrap: Uint8Array | Bootstrap };

/** The peer's CPU time so far (bench only). */
export interface CpuRequest {
  readonly type: 'cpu';
}

export type PeerRequest = WorkerMemoryRequest | BenchInit | CpuRequest | WorkerShutdown;

export type PeerReply =
  | WorkerMemory
  /** The init's bootstrap decoded: how many clusters it holds. */
  | { readonly type: 'initialized'; readonly clusters: number }
  | { readonly type: 'cpu'; readonly usage: NodeJS.CpuUsage }
  /** node-ipc's server learns of a client from its first message. */
  | { readonly type: 'hello' };

/** `usage` is sampled once: the round trips measure the channel, not process.memoryUsage(). */
function answer(request: Exclude<PeerRequest, WorkerShutdown>, usage: NodeJS.MemoryUsage): PeerReply {
  switch (request.type) {
    case 'memory_request':
      return { v: WORKER_PROTOCOL_VERSION, type: 'memory', id: request.id, usage };
    case 'init': {
      const bootstrap = request.bootstrap instanceof Uint8Array ? decodeWorkerBootstrap(request.bootstrap) : request.bootstrap;
      return { type: 'initialized', clusters: bootstrap.clusters.length };
    }
    case 'cpu':
      return { type: 'cpu', usage: process.cpuUsage() };
  }
}

/** The reply to send, or exits on a shutdown. */
function respond(request: PeerRequest, usage: NodeJS.MemoryUsage): PeerReply {
  return request.type === 'shutdown' ? process.exit(0) : answer(request, usage);
}

function main(): void {
  const usage = process.memoryUsage();
  const [channel, socketPath] = process.argv.slice(2);
  if (channel === 'child_process' && process.send) {
    process.on('message', (m: PeerRequest) => process.send!(respond(m, usage)));
    return;
  }
  const nodeIpc = channel === 'node-ipc' && socketPath ? loadNodeIpc() : null;
  if (nodeIpc === null) throw new Error(`usage: ipc_peer.js child_process (forked) | node-ipc <socket path> (node-ipc installed)`);
  const ipc = nodeIpc.create();
  ipc.config.stopRetrying = true;
  ipc.connectTo('supervisor', socketPath!, () => {
    const supervisor = ipc.of['supervisor']!;
    supervisor.on('connect', () => supervisor.emit('message', { type: 'hello' } satisfies PeerReply));
    supervisor.on('message', (m) => supervisor.emit('message', respond(m as PeerRequest, usage)));
    // Its supervisor gone, a worker goes too.
    supervisor.on('disconnect', () => process.exit(1));
  });
}

main();
