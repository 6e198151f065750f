// sd_notify(3) for Type=notify units: the supervisor tells systemd when it serves (READY=1),
// begins a hot restart (RELOADING=1) and stops (STOPPING=1), each as one datagram to
// $NOTIFY_SOCKET. Without NOTIFY_SOCKET it sends nothing.

import * as addon from '../native/addon';

/** The assignments of one notification, e.g. `{ READY: '1', STATUS: 'serving' }`. */
export type NotifyFields = Readonly<Record<string, string>>;

/** The protocol's newline-separated `VAR=value` lines; a value is one line, so newlines become spaces. */
export function notifyMessage(fields: NotifyFields): string {
  return Object.entries(fields)
    .map(([name, value]) => `${name}=${value.replace(/\n/g, ' ')}`)
    .join('\n');
}

/** CLOCK_MONOTONIC in microseconds, which RELOADING=1 carries as MONOTONIC_USEC (libuv's hrtime reads that clock). */
export function monotonicUsec(): string {
  return String(process.hrtime.bigint() / 1000n);
}

export class SystemdNotifier {
  private constructor(private readonly socketPath: string | null) {}

  /**
   * Takes NOTIFY_SOCKET out of `env`, as sd_notify's unset_environment does: the workers this
   * process forks then cannot speak for the service.
   */
  static takeFromEnvironment(env: NodeJS.ProcessEnv): SystemdNotifier {
    const socketPath = env.NOTIFY_SOCKET;
    delete env.NOTIFY_SOCKET;
    return new SystemdNotifier(socketPath ? socketPath : null);
  }

  /** Sends `fields` (a leading '@' in NOTIFY_SOCKET is abstract); throws NativeError if it cannot. */
  notify(fields: NotifyFields): void {
    if (this.socketPath === null) return;
    // A socket per message, as libsystemd does: a handful per epoch, and nothing to keep open.
    const fd = addon.unixDgramSocket();
    try {
      addon.unixDgramSend(fd, this.socketPath, Buffer.from(notifyMessage(fields)), []);
    } finally {
      addon.closeFd(fd);
    }
  }
}
