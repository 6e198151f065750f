// tcp_proxy's steady state without JavaScript: the addon's relay (native/src/relay.rs) moves the
// bytes between a downstream and an upstream socket, with the watermarks and statistics the
// JavaScript path has, counted into the same cells. The sockets stay Node's: paused while
// relayed, they are read in JavaScript again once the relay stops, at the first end of stream
// or error on either side (which Node then reads for itself), or when their owner closes it.

import type * as net from 'node:net';
import type * as tls from 'node:tls';
import * as addon from '../native/addon';
import type { Counter, Gauge } from '../stats/stats';
import { socketFd } from './socket_fd';

export const enum RelaySide {
  Downstream = 0,
  Upstream = 1,
}

/** One direction, named for the side it reads. */
export interface RelayFlow {
  /** The destination's buffer limit (0: none): beyond it the source is not read. */
  readonly limit: number;
  /** Bytes read from the source. */
  readonly rx: Counter;
  /** Bytes written to the destination. */
  readonly tx: Counter;
  /** Bytes waiting for the destination. */
  readonly buffered: Gauge;
  /** The source stopped being read, and read again. */
  readonly paused: Counter;
  readonly resumed: Counter;
}

/** Why a relay stopped: the side whose stream ended (errno 0) or failed (its errno). */
export type RelayStopped = (side: RelaySide, errno: number) => void;

const LAST_ACTIVITY = 2;

export class SocketRelay {
  /** Bytes read from each side, then the last activity (native/src/relay.rs writes them). */
  private readonly state = new Float64Array(3);
  private relay: addon.Relay | null = null;

  private constructor() {}

  /**
   * Relays between `downstream` and `upstream`, both plain TCP sockets that Node reads through
   * `onread` and that hold no unread or unsent bytes; null otherwise, the sockets read as before.
   */
  static start(downstream: net.Socket, upstream: net.Socket, flows: readonly [RelayFlow, RelayFlow], onStop: RelayStopped): SocketRelay | null {
    if (!idle(downstream) || !idle(upstream)) return null;
    const downFd = socketFd(downstream);
    const upFd = socketFd(upstream);
    if (downFd === null || upFd === null) return null;
    const cells: Float64Array[] = [];
    const indexes: number[] = [];
    for (const flow of flows) {
      for (const stat of [flow.rx, flow.tx, flow.buffered, flow.paused, flow.resumed]) {
        const cell = stat.statCell();
        if (cell === null) return null;
        cells.push(cell.cells);
        indexes.push(cell.index);
      }
    }
    const wasPaused = [downstream.isPaused(), upstream.isPaused()];
    downstream.pause();
    upstream.pause();
    // A socket Node reads through `onread` stops reading at pause(); any other keeps filling its
    // buffer, and would race the relay for the bytes.
    if (reading(downstream) || reading(upstream)) {
      if (!wasPaused[0]) downstream.resume();
      if (!wasPaused[1]) upstream.resume();
      return null;
    }
    const relay = new SocketRelay();
    relay.relay = addon.relayStart([downFd, upFd], [flows[0].limit, flows[1].limit], cells, indexes, relay.state, onStop);
    return relay;
  }

  /** Bytes read from `side` since the relay started. */
  bytesRead(side: RelaySide): number {
    return this.state[side]!;
  }

  /** When bytes last moved (Date.now() time); 0 before any did. */
  get lastActivity(): number {
    return this.state[LAST_ACTIVITY]!;
  }

  /** Stops relaying, once: the bytes each side sent that the other has not been given yet. */
  close(): { fromDownstream: Buffer; fromUpstream: Buffer } {
    const relay = this.relay;
    if (relay === null) return { fromDownstream: EMPTY, fromUpstream: EMPTY };
    this.relay = null;
    const [fromDownstream, fromUpstream] = addon.relayClose(relay);
    return { fromDownstream, fromUpstream };
  }
}

const EMPTY = Buffer.alloc(0);

/** Connected plain TCP, with nothing Node read and nobody took or wrote and Node has not sent. */
function idle(socket: net.Socket): boolean {
  return (
    !socket.destroyed &&
    !socket.connecting &&
    (socket as tls.TLSSocket).encrypted !== true &&
    socket.readableLength === 0 &&
    socket.writableLength === 0 &&
    !socket.readableEnded &&
    !socket.writableEnded
  );
}

function reading(socket: net.Socket): boolean {
  return (socket as unknown as { _handle: { reading?: boolean } | null })._handle?.reading !== false;
}
