// The supervisor-worker channel: Node's child_process IPC channel as the proxy uses it (forked
// with advanced serialization, the bootstrap sent as V8 bytes encoded once), against node-ipc,
// the library the design first named, over a Unix socket (JSON, its only framing). For each, a
// forked peer answers as a worker: the round trip of a small admin request and its reply
// (memory_request, memory), the delivery of a worker's init for 10,000 clusters until the peer
// holds the decoded bootstrap, and the CPU time both processes spend on them.
//
//   node dist/bench/ipc_channel.js                                   (part of `make bench`)
//
// node-ipc is not a dependency; to measure it, install it apart and point NODE_PATH there:
//   npm install --prefix /tmp/ipcdeps node-ipc@12.0.0
//   NODE_PATH=/tmp/ipcdeps/node_modules node dist/bench/ipc_channel.js

import { ChildProcess, fork, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadBootstrap } from '../src/config/load';
import type { Bootstrap } from '../src/config/model';
import { encodeWorkerBootstrap, workerBootstrap, WORKER_PROTOCOL_VERSION } from '../src/server/worker_protocol';
import type { BenchInit, PeerReply, PeerRequest } from './ipc_peer';
import { LoadedNodeIpc, loadNodeIpc, NodeIpcSocket } from './node_ipc';
import { staticClustersBootstrap } from './proxy_config';
import { median, percentile } from './summary';
import { builtinExtensions } from '../src/extensions/builtin_extensions';

const PEER = path.join(__dirname, 'ipc_peer.js');
const CLUSTERS = Number(process.env.IPC_BENCH_CLUSTERS ?? 10_000);
const ROUND_TRIPS = Number(process.env.IPC_BENCH_ROUND_TRIPS ?? 10_000);
const WARM_UP_ROUND_TRIPS = 1_000;
const INIT_ROUNDS = Number(process.env.IPC_BENCH_INIT_ROUNDS ?? 5);

/** One channel to a peer; one request in flight at a time, as each answer is awaited. */
interface Channel {
  request(m: PeerRequest): Promise<PeerReply>;
  close(): Promise<void>;
}

/** The awaited reply: the peer's next message, or its exit. */
class Replies {
  private pending: { resolve: (m: PeerReply) => void; reject: (e: Error) => void } | null = null;

  next(): Promise<PeerReply> {
    return new Promise((resolve, reject) => (this.pending = { resolve, reject }));
  }

  deliver(m: PeerReply): void {
    const pending = this.pending;
    this.pending = null;
    if (pending === null) throw new Error(`unrequested message from the peer: ${m.type}`);
    pending.resolve(m);
  }

  fail(e: Error): void {
    this.pending?.reject(e);
    this.pending = null;
  }
}

function exited(child: ChildProcess, replies: Replies): Promise<void> {
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      replies.fail(new Error(`the peer exited (code ${code}, signal ${signal})`));
      resolve();
    }),
  );
}

function childProcessChannel(): Channel {
  const child = fork(PEER, ['child_process'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced', execArgv: [] });
  const replies = new Replies();
  const exit = exited(child, replies);
  child.on('message', (m: PeerReply) => replies.deliver(m));
  return {
    request: (m) => {
      const reply = replies.next();
      child.send(m);
      return reply;
    },
    close: async () => {
      if (child.connected) child.send({ v: WORKER_PROTOCOL_VERSION, type: 'shutdown' } satisfies PeerRequest);
      await exit;
    },
  };
}

async function nodeIpcChannel(nodeIpc: LoadedNodeIpc, dir: string): Promise<Channel> {
  const socketPath = path.join(dir, 'supervisor.sock');
  const ipc = nodeIpc.create();
  const replies = new Replies();
  await new Promise<void>((resolve) => {
    ipc.serve(socketPath, resolve);
    ipc.server.start();
  });
  const child = spawn(process.execPath, [PEER, 'node-ipc', socketPath], { stdio: ['ignore', 'inherit', 'inherit'] });
  const exit = exited(child, replies);
  // node-ipc's server learns of a client from the client's first message.
  const peer = await new Promise<NodeIpcSocket>((resolve, reject) => {
    ipc.server.on('message', (m, socket) => ((m as PeerReply).type === 'hello' ? resolve(socket) : replies.deliver(m as PeerReply)));
    void exit.then(() => reject(new Error('the node-ipc peer exited before it connected')));
  }).catch((e: Error) => {
    ipc.server.stop();
    throw e;
  });
  return {
    request: (m) => {
      const reply = replies.next();
      ipc.server.emit(peer, 'message', m);
      return reply;
    },
    close: async () => {
      ipc.server.emit(peer, 'message', { v: WORKER_PROTOCOL_VERSION, type: 'shutdown' } satisfies PeerRequest);
      await exit;
      ipc.server.stop();
    },
  };
}

/** CPU time of this process and of the peer, in microseconds of user plus system. */
interface CpuPair {
  readonly self: number;
  readonly peer: number;
}

async function cpuNow(channel: Channel): Promise<CpuPair> {
  const reply = await channel.request({ type: 'cpu' });
  if (reply.type !== 'cpu') throw new Error(`expected the peer's CPU time, got ${reply.type}`);
  const self = process.cpuUsage();
  return { self: self.user + self.system, peer: reply.usage.user + reply.usage.system };
}

function cpuSince(channel: Channel, before: CpuPair): Promise<CpuPair> {
  return cpuNow(channel).then((now) => ({ self: now.self - before.self, peer: now.peer - before.peer }));
}

interface Result {
  readonly roundTripMs: readonly number[];
  readonly roundTripCpu: CpuPair;
  readonly initMs: readonly number[];
  readonly initCpu: CpuPair;
}

async function measure(channel: Channel, init: BenchInit): Promise<Result> {
  const roundTrip = async (id: number) => {
    const reply = await channel.request({ v: WORKER_PROTOCOL_VERSION, type: 'memory_request', id });
    if (reply.type !== 'memory' || reply.id !== id) throw new Error(`memory_request ${id} answered by ${reply.type}`);
  };
  for (let id = 0; id < WARM_UP_ROUND_TRIPS; id++) await roundTrip(id);
  let cpu = await cpuNow(channel);
  const roundTripMs: number[] = [];
  for (let id = 0; id < ROUND_TRIPS; id++) {
    const start = performance.now();
    await roundTrip(id);
    roundTripMs.push(performance.now() - start);
  }
  const roundTripCpu = await cpuSince(channel, cpu);
  cpu = await cpuNow(channel);
  const initMs: number[] = [];
  for (let round = 0; round < INIT_ROUNDS; round++) {
    const start = performance.now();
    const reply = await channel.request(init);
    initMs.push(performance.now() - start);
    if (reply.type !== 'initialized' || reply.clusters !== CLUSTERS) throw new Error(`init answered by ${JSON.stringify(reply)}`);
  }
  return { roundTripMs, roundTripCpu, initMs, initCpu: await cpuSince(channel, cpu) };
}

function report(name: string, result: Result): void {
  const us = (ms: number) => `${(ms * 1000).toFixed(0)} us`;
  const perRoundTrip = (cpu: number) => `${(cpu / ROUND_TRIPS).toFixed(0)} us`;
  const perInit = (cpu: number) => `${(cpu / 1000 / INIT_ROUNDS).toFixed(0)} ms`;
  const { roundTripMs, roundTripCpu, initMs, initCpu } = result;
  console.log(
    `${name.padEnd(34)}  round trip p50 ${us(median(roundTripMs)).padStart(7)}  p99 ${us(percentile(roundTripMs, 99)).padStart(7)}` +
      `  CPU ${perRoundTrip(roundTripCpu.self)} + ${perRoundTrip(roundTripCpu.peer)}` +
      `  |  init p50 ${median(initMs).toFixed(0).padStart(5)} ms  CPU ${perInit(initCpu.self)} + ${perInit(initCpu.peer)}`,
  );
}

/** The worker's bootstrap of `CLUSTERS` STATIC clusters of 3 hosts, made by the project's own loader. */
function workerModel(): Bootstrap {
  const json = JSON.stringify(staticClustersBootstrap(CLUSTERS, 8080, 10000, 9901));
  return workerBootstrap(loadBootstrap({ extensions: builtinExtensions(), configYaml: json, allowUnknownStaticFields: false }).bootstrap);
}

/** A worker's init as the supervisor's (supervisor.ts), with the given form of the bootstrap. */
function initMessage(bootstrap: Uint8Array | Bootstrap): BenchInit {
  return {
    v: WORKER_PROTOCOL_VERSION,
    type: 'init',
    workerIndex: 0,
    workerCount: 2,
    column: 1,
    regionName: '/proxy_bench_ipc',
    bootstrap,
    log: { level: 'info', componentLevels: [], fileLevels: [], format: '[%Y-%m-%d %T.%e][%t][%l][%n] %v', prefixWithLocation: false, escaped: false, path: '', fineGrain: false },
    drain: { strategy: 'gradual', drainTimeS: 600 },
    runtime: [],
    healthCheckFailed: false,
    mutexTracing: false,
    recentLookupsCapacity: 0,
    fileFlushIntervalMs: 10000,
  };
}

async function main(): Promise<void> {
  const model = workerModel();
  const bytes = encodeWorkerBootstrap(model);
  const json = JSON.stringify(model);
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
  console.log(
    `ipc_channel: ${ROUND_TRIPS} round trips of memory_request and its reply, then ${INIT_ROUNDS} worker inits of ` +
      `${CLUSTERS} STATIC clusters x 3 hosts (bootstrap ${mib(bytes.length)} as V8 bytes, ${mib(json.length)} as JSON); ` +
      `CPU is supervisor + peer, per round trip and per init`,
  );
  const builtin = childProcessChannel();
  try {
    report('child_process, advanced', await measure(builtin, initMessage(bytes)));
  } finally {
    await builtin.close();
  }
  const nodeIpc = loadNodeIpc();
  if (nodeIpc === null) {
    console.log('node-ipc not installed: skipped (npm install --no-save node-ipc@12.0.0)');
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-bench-ipc-'));
  try {
    const channel = await nodeIpcChannel(nodeIpc, dir);
    try {
      report(`node-ipc ${nodeIpc.version}, Unix socket, JSON`, await measure(channel, initMessage(model)));
    } finally {
      await channel.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: Error) => {
  process.stderr.write(`ipc channel bench failed: ${e.stack ?? e.message}\n`);
  process.exitCode = 1;
});
