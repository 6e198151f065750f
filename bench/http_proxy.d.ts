// The part of http-proxy's API that bench/node_http_proxy.ts uses; the package ships no types.
declare module 'http-proxy' {
  import type { Agent, IncomingMessage, ServerResponse } from 'node:http';

  export interface ServerOptions {
    readonly target: string;
    readonly agent?: Agent;
  }

  export interface ProxyServer {
    web(req: IncomingMessage, res: ServerResponse): void;
    on(event: 'error', listener: (error: Error, req: IncomingMessage, res: ServerResponse) => void): this;
  }

  export function createProxyServer(options: ServerOptions): ProxyServer;
}
