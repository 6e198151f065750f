// node-ipc, which the design set aside for Node's own channel, loaded only when someone
// installed it: it is not a dependency. The part of its API the IPC bench uses.
//
//   npm install --prefix /some/dir node-ipc@12.0.0; then NODE_PATH=/some/dir/node_modules

import * as fs from 'node:fs';
import * as path from 'node:path';

/** A connected client as node-ipc's server knows it (a net.Socket underneath). */
export type NodeIpcSocket = object;

/** One node-ipc instance: a server (serve) or a client (connectTo) of Unix sockets. */
export interface NodeIpc {
  readonly config: { silent: boolean; stopRetrying: boolean };
  serve(socketPath: string, onStarted: () => void): void;
  readonly server: {
    on(event: string, listener: (data: unknown, socket: NodeIpcSocket) => void): void;
    emit(socket: NodeIpcSocket, event: string, data: unknown): void;
    start(): void;
    stop(): void;
  };
  connectTo(id: string, socketPath: string, onCreated: () => void): void;
  readonly of: Record<string, { on(event: string, listener: (data: unknown) => void): void; emit(event: string, data: unknown): void }>;
}

export interface LoadedNodeIpc {
  readonly version: string;
  /** A new instance, silent (node-ipc logs every event to the console by default). */
  create(): NodeIpc;
}

export function loadNodeIpc(): LoadedNodeIpc | null {
  let entry: string;
  try {
    entry = require.resolve('node-ipc');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return null;
    throw e;
  }
  // Its package.json is not among its exports: read it beside the entry point.
  const { version } = JSON.parse(fs.readFileSync(path.join(path.dirname(entry), 'package.json'), 'utf8')) as { version: string };
  // 10.x and later: an ES module with a CommonJS bundle exporting the class (9.x exported an instance).
  const { IPCModule } = require(entry) as { IPCModule?: new () => NodeIpc };
  if (IPCModule === undefined) throw new Error(`node-ipc ${version} exports no IPCModule: this bench loads 10.x to 12.x`);
  return {
    version,
    create: () => {
      const ipc = new IPCModule();
      ipc.config.silent = true;
      return ipc;
    },
  };
}
