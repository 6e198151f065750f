// Which process holds a TCP socket on 127.0.0.1, from /proc: lets an upstream in a test tell
// which proxy worker sent a request (by the port of the worker's end of the connection).

import * as fs from 'node:fs';
import * as http from 'node:http';
import type * as net from 'node:net';

/**
 * Inodes of the sockets whose local end is port `port`. Several can match: a closed connection
 * that used the same ephemeral port towards another peer lingers in TIME_WAIT, with inode 0.
 */
function socketInodes(port: number): Set<string> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[9] !== '0') inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/** The one of `pids` that has a socket bound locally to port `port` open; undefined if none. */
export function socketOwner(port: number, pids: readonly number[]): number | undefined {
  const inodes = socketInodes(port);
  if (inodes.size === 0) return undefined;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        if (inode !== undefined && inodes.has(inode)) return pid;
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return undefined;
}

/** This process's descriptor of the TCP socket bound locally to port `port`; undefined if none. */
export function ownSocketFd(port: number): number | undefined {
  const inodes = socketInodes(port);
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${fd}`))?.[1];
      if (inode !== undefined && inodes.has(inode)) return Number(fd);
    } catch {
      // Closed meanwhile.
    }
  }
  return undefined;
}

/** An upstream on 127.0.0.1 that answers its name and records which proxy worker sent each request. */
export interface NamedUpstream {
  readonly name: string;
  readonly port: number;
  readonly server: http.Server;
  /** The worker (pid, of `workers()`) behind each request seen. */
  readonly seen: (number | undefined)[];
}

export async function namedUpstream(name: string, workers: () => number[]): Promise<NamedUpstream> {
  const seen: (number | undefined)[] = [];
  const server = http.createServer((req, res) => {
    seen.push(socketOwner(req.socket.remotePort!, workers()));
    res.end(name);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { name, port: (server.address() as net.AddressInfo).port, server, seen };
}
