// The statsd sink over TCP through a static cluster (Envoy's TcpStatsdSink): each flush's lines,
// newline-terminated, on one connection to one of the cluster's hosts, opened at the first
// flush and again after it closes (the next host then). A flush finding no host is dropped. A
// peer that stops reading must not grow the supervisor's memory: past MAX_BUFFERED_BYTES
// unsent, the connection is closed, the flush dropped and statsd.cx_overflow counted, as in Envoy.

import type * as net from 'node:net';
import type { ClusterHosts } from '../../config/xds/cluster_hosts';
import type { Logger } from '../../log/logger_api';
import { openTcp } from '../../network/connector';
import type { Counter } from '../stats';
import { forEachStatsdLine, type StatsdNames } from './statsd_lines';
import type { SinkSnapshot, StatsSink } from './stats_sink';

/** Envoy's MAX_BUFFERED_STATS_BYTES. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

export class TcpStatsdSink implements StatsSink {
  private socket: net.Socket | null = null;

  /** Lines under this file's name. */
  private readonly log: Logger;

  constructor(
    private readonly hosts: ClusterHosts,
    private readonly names: StatsdNames,
    private readonly overflow: Counter,
    log: Logger,
  ) {
    this.log = log.forFile(__filename);
  }

  flush(snapshot: SinkSnapshot): void {
    const lines: string[] = [];
    forEachStatsdLine(snapshot, this.names, (line) => lines.push(line));
    if (lines.length === 0) return;
    if (this.socket !== null && this.socket.writableLength > MAX_BUFFERED_BYTES) {
      this.disconnect();
      this.overflow.inc();
      return;
    }
    const socket = this.socket ?? this.connect();
    socket?.write(`${lines.join('\n')}\n`);
  }

  close(): void {
    this.disconnect();
  }

  private connect(): net.Socket | null {
    const host = this.hosts.pick();
    if (host === null) return null;
    const socket = openTcp({ host: host.address, port: host.port, allowHalfOpen: false });
    socket.on('error', (error) => this.log.debug(`statsd TCP cluster '${this.hosts.clusterName}' ${host.address}:${host.port}: ${error.message}`));
    socket.on('close', () => {
      if (this.socket === socket) this.socket = null;
    });
    // Whatever the peer sends is read and dropped.
    socket.resume();
    this.socket = socket;
    return socket;
  }

  private disconnect(): void {
    this.socket?.destroy();
    this.socket = null;
  }
}
