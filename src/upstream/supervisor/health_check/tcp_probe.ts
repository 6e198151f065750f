// The TCP check (Envoy's TcpHealthCheckerImpl): connect, send the payload, and succeed once every
// expected payload has been found, in order, in what came back. Without payloads to receive it
// only connects, and closes the connection again, whatever reuse_connection says, as Envoy does.

import type { Socket } from 'node:net';
import { HEALTHY, type HealthProbe, NETWORK_FAILURE, type ProbeTarget } from './health_probe';
import type { CheckOutcome } from './verdict';

/** What a host may send without matching before the check fails, so a chatty peer costs bounded memory. */
const MAX_RECEIVED_BYTES = 1024 * 1024;

/** Envoy's TcpHealthCheckMatcher::match: each segment found after the end of the one before it. */
export function receivedAll(segments: readonly Buffer[], received: Buffer): boolean {
  let from = 0;
  for (const segment of segments) {
    const at = received.indexOf(segment, from);
    if (at < 0) return false;
    from = at + segment.length;
  }
  return true;
}

export class TcpProbe implements HealthProbe {
  private socket: Socket | null = null;
  /** The connection carries data: connected, and for TLS handshaken with a verified peer. */
  private ready = false;
  private received: Buffer = Buffer.alloc(0);
  private done: ((outcome: CheckOutcome) => void) | null = null;

  constructor(
    private readonly target: ProbeTarget,
    private readonly send: Buffer,
    private readonly receive: readonly Buffer[],
    private readonly reuseConnection: boolean,
  ) {}

  check(done: (outcome: CheckOutcome) => void): void {
    this.done = done;
    this.received = Buffer.alloc(0);
    if (this.socket === null) this.connect();
    else if (this.ready && this.send.length > 0) this.socket.write(this.send);
  }

  abort(): void {
    this.done = null;
    this.disconnect();
  }

  close(): void {
    this.abort();
  }

  private connect(): void {
    const { address, connector } = this.target;
    const socket = connector.connect({ host: address.address, port: address.port, allowHalfOpen: false });
    socket.setNoDelay(true);
    this.socket = socket;
    this.ready = false;
    socket.once(connector.readyEvent, () => {
      if (this.socket !== socket) return;
      this.ready = true;
      if (this.receive.length === 0) {
        this.disconnect();
        this.finish(HEALTHY);
      } else if (this.done !== null && this.send.length > 0) {
        socket.write(this.send);
      }
    });
    socket.on('data', (data: Buffer) => {
      if (this.socket !== socket) return;
      if (this.done === null) return this.fail();
      this.received = Buffer.concat([this.received, data]);
      if (this.received.length > MAX_RECEIVED_BYTES) return this.fail();
      if (!receivedAll(this.receive, this.received)) return;
      this.received = Buffer.alloc(0);
      if (!this.reuseConnection) this.disconnect();
      this.finish(HEALTHY);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.socket === socket) this.fail();
    });
  }

  private finish(outcome: CheckOutcome): void {
    const done = this.done;
    this.done = null;
    done?.(outcome);
  }

  private fail(): void {
    this.disconnect();
    this.finish(NETWORK_FAILURE);
  }

  private disconnect(): void {
    this.socket?.destroy();
    this.socket = null;
  }
}
