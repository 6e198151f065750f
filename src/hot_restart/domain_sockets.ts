// The Unix datagram sockets epochs talk over. Epoch E binds `<socket-path>_child_<id>`, where it
// asks its parent, and `<socket-path>_parent_<id>`, where its own child will ask, with
// id = base_id * 10 + E % 3: at most three epochs live at once, so three ids per base suffice.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as addon from '../native/addon';
import { NativeError } from '../native/addon';
import {
  HotRestartBindError,
  HotRestartPeerUnreachableError,
  HotRestartSendError,
  HotRestartSocketInUseError,
} from './errors';
import { FrameDecoder, frameMessage, FramingError, MAX_CHUNK_BYTES } from './framing';
import { DecodedMessage, decodeMessage, encodeMessage, HotRestartMessage } from './messages';
import { scaledBaseId } from '../shared_memory/posix_shared_memory';

export type DomainSocketRole = 'parent' | 'child';

export const DEFAULT_SOCKET_PATH = '@proxy_domain_socket';
export const DEFAULT_SOCKET_MODE = 0o600;
const MAX_CONCURRENT_EPOCHS = 3;

/** `@proxy_domain_socket_parent_10` for base id 1, epoch 0 or 3. */
export function domainSocketName(socketPath: string, role: DomainSocketRole, baseId: number, epoch: number): string {
  return `${socketPath}_${role}_${scaledBaseId(baseId) + (epoch % MAX_CONCURRENT_EPOCHS)}`;
}

/** A leading '@' names Linux's abstract namespace: no file, no permissions. */
export function isAbstractSocketPath(socketPath: string): boolean {
  return socketPath.startsWith('@');
}

export interface DomainSocketOptions {
  readonly socketPath: string;
  /** Permission bits of filesystem sockets (--socket-mode); ignored for abstract ones. */
  readonly socketMode: number;
  readonly baseId: number;
  readonly restartEpoch: number;
}

/** The socket of the epoch a socket talks to. */
export interface DomainSocketPeer {
  readonly name: string;
  /** For errors: `the parent process (epoch 2)`. */
  readonly description: string;
}

/** One bound socket: sends whole messages to its peer and reassembles the ones it receives. */
export class DomainSocket {
  private readonly decoder = new FrameDecoder();
  /** Descriptors that came with the datagrams of the message being reassembled. */
  private pendingFds: number[] = [];
  private closed = false;

  private constructor(
    readonly fd: number,
    readonly name: string,
    private readonly peer: DomainSocketPeer | null,
  ) {}

  static bind(name: string, peer: DomainSocketPeer | null, options: DomainSocketOptions): DomainSocket {
    let fd: number;
    try {
      fd = addon.unixDgramBind(name);
    } catch (error) {
      if (error instanceof NativeError) throw bindError(options, error.errno, error.code);
      throw error;
    }
    // As in Envoy, a mode of 0 means unset: the file keeps the mode the umask gave it.
    if (!isAbstractSocketPath(name) && options.socketMode !== 0) {
      try {
        fs.chmodSync(name, options.socketMode);
      } catch (error) {
        addon.closeFd(fd);
        const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
        throw bindError(options, os.constants.errno[code as keyof typeof os.constants.errno] ?? 0, code);
      }
    }
    return new DomainSocket(fd, name, peer);
  }

  /** The peer's socket name; null for epoch 0's child socket, which has no parent to ask. */
  get peerName(): string | null {
    return this.peer?.name ?? null;
  }

  /** Sends `message` to the peer; a reply's descriptor rides on the datagram that ends it. */
  send(message: HotRestartMessage): void {
    const peer = this.peer;
    if (peer === null) throw new Error(`${this.name} has no peer to send to`);
    const { payload, fds } = encodeMessage(message);
    const chunks = frameMessage(payload);
    chunks.forEach((chunk, i) => {
      try {
        addon.unixDgramSend(this.fd, peer.name, chunk, i === chunks.length - 1 ? fds : []);
      } catch (error) {
        if (!(error instanceof NativeError)) throw error;
        if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') {
          throw new HotRestartPeerUnreachableError(
            `${peer.description} is not bound to ${peer.name} (${error.code}): ` +
              'is it running, with the same --base-id and --socket-path?',
          );
        }
        throw new HotRestartSendError(`hot restart sendmsg() to ${peer.name} failed: ${error.message}`);
      }
    });
  }

  /**
   * The next whole message, waiting up to `waitMs` (0: only what has arrived) for its datagrams;
   * null if it has not all come. Garbage comes back as an unrecognized message.
   */
  receive(waitMs: number): DecodedMessage | null {
    const deadline = Date.now() + waitMs;
    for (;;) {
      let payload: Buffer | null;
      try {
        const datagram = this.readDatagram(Math.max(0, deadline - Date.now()));
        if (datagram === null) return null;
        this.pendingFds.push(...datagram.fds);
        payload = this.decoder.push(datagram.data);
      } catch (error) {
        if (!(error instanceof FramingError)) throw error;
        this.decoder.reset();
        this.closePendingFds();
        return { kind: 'unrecognized', reason: error.message };
      }
      if (payload === null) continue;
      const { message, unusedFds } = decodeMessage(payload, this.pendingFds);
      this.pendingFds = [];
      unusedFds.forEach((fd) => addon.closeFd(fd));
      return message;
    }
  }

  /** Closes the socket and any descriptor of a message that never completed. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.closePendingFds();
    addon.closeFd(this.fd);
  }

  private readDatagram(waitMs: number): addon.Datagram | null {
    try {
      return addon.unixDgramRecv(this.fd, MAX_CHUNK_BYTES, waitMs);
    } catch (error) {
      // The kernel read has already dropped it: no sender of this protocol sends one that long.
      if (error instanceof NativeError && error.code === 'EMSGSIZE') {
        throw new FramingError(`a datagram longer than ${MAX_CHUNK_BYTES} bytes`);
      }
      throw error;
    }
  }

  private closePendingFds(): void {
    this.pendingFds.splice(0).forEach((fd) => addon.closeFd(fd));
  }
}

function bindError(options: DomainSocketOptions, errno: number, code: string): Error {
  const message =
    `unable to bind domain socket with base_id=${scaledBaseId(options.baseId)}, id=${options.restartEpoch}, ` +
    `errno=${errno} (see --base-id option)`;
  return code === 'EADDRINUSE' ? new HotRestartSocketInUseError(message) : new HotRestartBindError(message);
}

/** Both sockets of one epoch: `child` asks the previous epoch, `parent` answers the next one. */
export class HotRestartSockets {
  private constructor(
    readonly child: DomainSocket,
    readonly parent: DomainSocket,
  ) {}

  /** Binds the child socket, then the parent socket, as Envoy does. */
  static bind(options: DomainSocketOptions): HotRestartSockets {
    const { socketPath, baseId, restartEpoch: epoch } = options;
    const name = (role: DomainSocketRole, at: number) => domainSocketName(socketPath, role, baseId, at);
    const previousParent: DomainSocketPeer | null =
      epoch === 0 ? null : { name: name('parent', epoch - 1), description: `the parent process (epoch ${epoch - 1})` };
    const nextChild: DomainSocketPeer = {
      name: name('child', epoch + 1),
      description: `the child process (epoch ${epoch + 1})`,
    };
    const child = DomainSocket.bind(name('child', epoch), previousParent, options);
    try {
      return new HotRestartSockets(child, DomainSocket.bind(name('parent', epoch), nextChild, options));
    } catch (error) {
      child.close();
      throw error;
    }
  }

  close(): void {
    this.child.close();
    this.parent.close();
  }
}
