// The statsd and DogStatsD sinks over UDP (Envoy's UdpStatsdSink): counters and gauges in
// datagrams gathered up to max_bytes_per_datagram (one line each without it), then a datagram
// per histogram sample, as Envoy sends each one on its own. A datagram that cannot be sent is
// lost, as with any statsd client.

import * as dgram from 'node:dgram';
import { isIP } from 'node:net';
import type { SocketAddress } from '../../config/model';
import type { Logger } from '../../log/logger_api';
import { DatagramBatcher } from './datagram_batcher';
import { forEachStatsdLine, type StatsdNames } from './statsd_lines';
import type { SinkSnapshot, StatsSink } from './stats_sink';

export class UdpStatsdSink implements StatsSink {
  private readonly socket: dgram.Socket;
  /** A failing send is said once until one succeeds again, not at every datagram. */
  private failing = false;

  /** Lines under this file's name. */
  private readonly log: Logger;

  constructor(
    private readonly address: SocketAddress,
    private readonly names: StatsdNames,
    private readonly maxBytesPerDatagram: number,
    log: Logger,
  ) {
    this.log = log.forFile(__filename);
    this.socket = dgram.createSocket(isIP(address.address) === 6 ? 'udp6' : 'udp4');
    this.socket.on('error', (error) => this.sendFailed(error));
  }

  flush(snapshot: SinkSnapshot): void {
    const batcher = new DatagramBatcher(this.maxBytesPerDatagram, (datagram) => this.send(datagram));
    forEachStatsdLine(snapshot, this.names, (line, type) => {
      if (type === 'ms') {
        // Timers come last: the counters and gauges gathered go first.
        batcher.flush();
        this.send(line);
      } else {
        batcher.add(line);
      }
    });
    batcher.flush();
  }

  close(): void {
    this.socket.close();
  }

  private send(datagram: string): void {
    this.socket.send(datagram, this.address.port, this.address.address, (error) => {
      if (error) this.sendFailed(error);
      else this.failing = false;
    });
  }

  private sendFailed(error: Error): void {
    if (!this.failing) this.log.warn(`statsd UDP ${this.address.address}:${this.address.port}: ${error.message}`);
    this.failing = true;
  }
}
