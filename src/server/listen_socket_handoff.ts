// How a worker gets its listen sockets (a start's static listeners, then LDS's as they come):
// Node's IPC channel passes only its own handles, so each descriptor goes over a Unix
// datagram socket the worker binds in the abstract namespace, named by its pid. The supervisor
// sends an LDS listener's datagram (its name, the descriptor) before the IPC message that asks
// for it; a start's static listeners follow the start, as the worker reads them.

import * as addon from '../native/addon';

/** A listener name is at most this long in a handoff datagram. */
const MAX_NAME_BYTES = 64 * 1024;
/** The datagram is queued, or (a start's) sent as soon as the queue has room: this only bounds a lost one. */
const RECEIVE_TIMEOUT_MS = 1000;

export function handoffSocketName(workerPid: number): string {
  return `@proxy_listen_socket_handoff_${workerPid}`;
}

/** The supervisor's end: one unbound socket that sends to every worker. */
export class ListenSocketSender {
  private readonly fd = addon.unixDgramSocket();

  /** Duplicates `listenFd` into the worker, tagged with the listener's name. */
  send(workerPid: number, name: string, listenFd: number): void {
    addon.unixDgramSend(this.fd, handoffSocketName(workerPid), Buffer.from(name), [listenFd]);
  }

  close(): void {
    addon.closeFd(this.fd);
  }
}

/** A worker's end, bound under its pid before it reports ready. */
export class ListenSocketReceiver {
  private readonly fd = addon.unixDgramBind(handoffSocketName(process.pid));

  /**
   * The descriptor sent for `name`, owned by the caller.
   * @throws Error when none came, or one for another listener (its descriptors are closed)
   */
  receive(name: string): number {
    const datagram = addon.unixDgramRecv(this.fd, MAX_NAME_BYTES, RECEIVE_TIMEOUT_MS);
    if (datagram === null) throw new Error(`no listen socket came for listener '${name}'`);
    const [fd, ...extra] = datagram.fds;
    const sentFor = datagram.data.toString();
    for (const other of extra) addon.closeFd(other);
    if (fd === undefined || sentFor !== name) {
      if (fd !== undefined) addon.closeFd(fd);
      throw new Error(`expected the listen socket of listener '${name}', got ${fd === undefined ? 'none' : `that of '${sentFor}'`}`);
    }
    return fd;
  }

  close(): void {
    addon.closeFd(this.fd);
  }
}
