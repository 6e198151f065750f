// A listener's listen sockets, as Envoy's ListenSocketFactory makes them: one that every worker
// shares, or with the listener's reuse_port one per worker, each bound with SO_REUSEPORT so that
// the kernel spreads new connections over the workers by a hash of their addresses. A shared
// socket goes to whichever worker's accept wins, and one worker may take a whole burst.

export interface ListenSockets {
  /** The shared descriptor, or with reuse_port each worker index's. */
  readonly fds: readonly number[];
  readonly reusePort: boolean;
  /** The bound port: the kernel's choice for port 0, which every reuse_port socket then binds. */
  readonly port: number;
}

/** The socket worker `workerIndex` accepts on. */
export function workerListenSocket(sockets: ListenSockets, workerIndex: number): number {
  return sockets.reusePort ? sockets.fds[workerIndex]! : sockets.fds[0]!;
}

/** What binding a listener's sockets needs. */
export interface ListenSocketBinder {
  /**
   * A duplicate of the previous epoch's socket for the address, or null.
   * @param workerIndex that worker's socket of a reuse_port listener; null for a shared one
   */
  inherit(address: string, port: number, workerIndex: number | null): Promise<number | null>;
  /** A fresh socket on `address`:`port`; port 0 asks the kernel for one. */
  bind(address: string, port: number, reusePort: boolean): Promise<{ fd: number; port: number }>;
  close(fd: number): void;
}

/**
 * The sockets of a listener on `address`:`port` for `workers` workers: each taken over from the
 * previous epoch where it has one of the same kind, else bound. A port-0 listener never matches
 * the previous epoch's (Envoy's rule); its reuse_port sockets bind the port the first one got.
 * On failure, those made so far are closed.
 */
export async function bindListenSockets(binder: ListenSocketBinder, address: string, port: number, reusePort: boolean, workers: number): Promise<ListenSockets> {
  const fds: number[] = [];
  let boundPort = port;
  try {
    for (let index = 0; index < (reusePort ? workers : 1); index++) {
      const inherited = port === 0 ? null : await binder.inherit(address, port, reusePort ? index : null);
      if (inherited !== null) {
        fds.push(inherited);
        continue;
      }
      const bound = await binder.bind(address, boundPort, reusePort);
      fds.push(bound.fd);
      boundPort = bound.port;
    }
  } catch (error) {
    for (const fd of fds) binder.close(fd);
    throw error;
  }
  return { fds, reusePort, port: boundPort };
}

/**
 * The socket the next epoch asks for: the shared one (`workerIndex` null), or that worker's of
 * a reuse_port listener; null when these sockets are of the other kind or have no such index.
 */
export function socketForNextEpoch(sockets: ListenSockets, workerIndex: number | null): number | null {
  if (sockets.reusePort !== (workerIndex !== null)) return null;
  return sockets.fds[workerIndex ?? 0] ?? null;
}
