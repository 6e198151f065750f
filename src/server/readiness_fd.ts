// The readiness notification scripts/hot-restarter asks of each epoch it starts, in the form of
// s6's notification-fd: $PROXY_READY_FD names a descriptor the epoch inherited; once the epoch
// serves (when it would say READY=1 to systemd) it writes a newline there and closes it. The
// wrapper holds a restart asked for while an epoch initializes until then, since the next
// epoch would refuse to start ("still initializing"). A failed write closes it all the same:
// the wrapper then waits no longer.

import * as fs from 'node:fs';

export const READY_FD_VARIABLE = 'PROXY_READY_FD';

export class ReadinessFd {
  private constructor(private value: string | null) {}

  /** Takes PROXY_READY_FD out of `env`: the workers this process forks must not close it. */
  static takeFromEnvironment(env: NodeJS.ProcessEnv): ReadinessFd {
    const value = env[READY_FD_VARIABLE];
    delete env[READY_FD_VARIABLE];
    return new ReadinessFd(value ? value : null);
  }

  /** Writes the newline and closes the descriptor, once; throws what went wrong. */
  announceServing(): void {
    const value = this.value;
    if (value === null) return;
    this.value = null;
    if (!/^\d+$/.test(value) || Number(value) < 3) throw new Error(`${READY_FD_VARIABLE}=${value} does not name an inherited descriptor`);
    const fd = Number(value);
    let failure: Error | null = null;
    try {
      fs.writeSync(fd, '\n');
    } catch (error) {
      failure = error as Error;
    }
    try {
      fs.closeSync(fd);
    } catch {
      // Never open (EBADF): the write said so already.
    }
    if (failure !== null) throw new Error(`cannot write to ${READY_FD_VARIABLE}=${value}: ${failure.message}`);
  }
}
