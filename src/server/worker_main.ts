// A worker process (Envoy's worker thread): maps the supervisor's stats region, adopts the
// inherited listen sockets and runs the data plane until told to stop, or orphaned.

import * as net from 'node:net';
import { attachRegion } from '../hot_restart/shared_memory';
import { loggerFactory, openLogs } from '../log/log_settings';
import { ListenerManager } from '../listener/listener_manager';
import { DrainManager } from '../hot_restart/drain_manager';
import { SharedStatsStore } from '../stats/store';
import { ClusterManager } from '../upstream/cluster_manager';
import { declareClusterStatNames } from '../upstream/cluster_stats';
import { FIRST_LISTENER_FD, isMessage, SupervisorMessage, WorkerInit, WorkerMessage, WORKER_PROTOCOL_VERSION } from './worker_protocol';

function send(m: WorkerMessage): void {
  if (process.connected) process.send!(m);
}

function adopt(fd: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ fd }, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

async function run(init: WorkerInit): Promise<void> {
  const logs = await openLogs(init.log, process.pid);
  const log = logs.component('main');
  const store = new SharedStatsStore(attachRegion(init.regionName), init.column);
  const clusters = new ClusterManager(init.bootstrap.clusters, store, init.hostSlots);
  // Envoy declares a cluster's stats when it builds the cluster: the workers share that out,
  // each its own slice, so that 10,000 clusters' names are interned on every core at once.
  init.bootstrap.clusters.forEach((config, i) => {
    if (i % init.workerCount === init.workerIndex) declareClusterStatNames(store, config);
  });
  const drain = new DrainManager(init.drain);
  const listeners = new ListenerManager({
    bootstrap: init.bootstrap,
    stats: store,
    clusters,
    log: loggerFactory(logs),
    drain,
  });
  for (const [i, name] of init.listeners.entries()) {
    const config = init.bootstrap.listeners.find((l) => l.name === name)!;
    listeners.addListener(config, await adopt(FIRST_LISTENER_FD + i));
  }

  const stoppedCounter = store.counter('listener_manager.listener_stopped');
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`worker ${init.workerIndex} stopping: ${why}`);
    listeners.stopListeners();
    void listeners
      .close()
      .then(() => {
        clusters.close();
        drain.close();
        return logs.flush();
      })
      .finally(() => process.exit(0));
  };
  const reopenLogs = () => void logs.reopen().catch((e: Error) => log.error(`cannot reopen the log file: ${e.message}`));
  process.on('message', (m: unknown) => {
    if (!isMessage<SupervisorMessage>(m)) return;
    if (m.type === 'shutdown') stop('supervisor shutdown');
    if (m.type === 'reopen_logs') reopenLogs();
    if (m.type === 'memory_request') send({ v: WORKER_PROTOCOL_VERSION, type: 'memory', id: m.id, usage: process.memoryUsage() });
    if (m.type === 'stop_listeners') {
      const names = new Set(m.listeners);
      // Envoy counts a stop per listener per worker.
      const stopNow = () => stoppedCounter.add(listeners.stopListeners(names));
      if (m.graceful && !drain.draining) {
        log.info(`worker ${init.workerIndex} draining before it stops ${m.listeners.length} listener(s)`);
        drain.startDrainSequence(stopNow);
      } else stopNow();
    }
    if (m.type === 'drain' && !drain.draining) {
      log.info(`worker ${init.workerIndex} draining (${init.drain.strategy}, ${init.drain.drainTimeS}s)`);
      listeners.stopListeners();
      // Busy HTTP connections close after a response (drainClose); idle ones at the deadline.
      drain.startDrainSequence(() => listeners.closeIdleConnections());
    }
  });
  // The supervisor is gone (even SIGKILL closes the channel): no orphan keeps serving.
  process.on('disconnect', () => stop('supervisor disconnected'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Sent to every process of the unit by logrotate or `systemctl kill -s USR1`, as to Envoy's.
  process.on('SIGUSR1', reopenLogs);
  // Ctrl-C reaches the whole process group; the supervisor decides how workers stop.
  process.on('SIGINT', () => undefined);
  send({ v: WORKER_PROTOCOL_VERSION, type: 'ready' });
  log.info(`worker ${init.workerIndex} serving ${init.listeners.length} listener(s)`);
}

/** Tells the supervisor why, then exits 1 once the message has left (or the channel is gone). */
function fatal(message: string): void {
  const m: WorkerMessage = { v: WORKER_PROTOCOL_VERSION, type: 'fatal', message };
  if (process.connected) process.send!(m, () => process.exit(1));
  else process.exit(1);
}

process.once('message', (m: unknown) => {
  if (!isMessage<SupervisorMessage>(m) || m.type !== 'init') {
    fatal('expected an init message of worker protocol v1');
    return;
  }
  run(m).catch((e: Error) => fatal(e.stack ?? e.message));
});
