// Which process holds a TCP socket on 127.0.0.1, from /proc: lets an upstream in a test tell
// which proxy worker sent a request (by the port of the worker's end of the connection).

import * as fs from 'node:fs';

/** The inode of the IPv4 socket bound locally to 127.0.0.1:`port`, from /proc/net/tcp. */
function socketInode(port: number): string | undefined {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] === local) return fields[9];
  }
  return undefined;
}

/** The one of `pids` that has the socket bound to 127.0.0.1:`port` open; undefined if none. */
export function socketOwner(port: number, pids: readonly number[]): number | undefined {
  const inode = socketInode(port);
  if (inode === undefined) return undefined;
  const target = `socket:[${inode}]`;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return pid;
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return undefined;
}
