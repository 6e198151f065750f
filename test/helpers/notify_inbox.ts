// systemd's side of sd_notify for tests: a datagram socket to name in NOTIFY_SOCKET, read one
// message at a time. A BARRIER=1 message's descriptor is closed on receipt, which is how systemd
// tells systemd-notify that everything before it was read.

import * as addon from '../../src/native/addon';
import { waitFor } from './proxy_process';

/** One message's assignments, e.g. { READY: '1', STATUS: 'epoch 0: serving with 1 workers' }. */
export type Notification = Readonly<Record<string, string>>;

const MAX_MESSAGE_BYTES = 4096;

function parse(message: string): Notification {
  return Object.fromEntries(message.split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

export class NotifyInbox {
  private readonly fd: number;

  /** Binds `path` ('@' for the abstract namespace), the NOTIFY_SOCKET to give the proxy. */
  constructor(readonly path: string) {
    this.fd = addon.unixDgramBind(path);
  }

  /** The next message, parsed; fails after `timeoutMs` without one. */
  next(timeoutMs = 20_000): Promise<Notification> {
    return waitFor(`a notification on ${this.path}`, () => this.take() ?? undefined, timeoutMs);
  }

  /** The next message if one is queued now, else null. */
  take(): Notification | null {
    const datagram = addon.unixDgramRecv(this.fd, MAX_MESSAGE_BYTES, 0);
    if (datagram === null) return null;
    for (const fd of datagram.fds) addon.closeFd(fd);
    return parse(datagram.data.toString());
  }

  close(): void {
    addon.closeFd(this.fd);
  }
}
