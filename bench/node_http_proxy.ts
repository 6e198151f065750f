// The Node.js reference row: node-http-proxy in one process, as a Node shop would deploy it,
// with a keep-alive agent so that it reuses upstream connections like nginx and our proxy do.
//
// Usage: node dist/bench/node_http_proxy.js <listen port> <upstream port>

import { Agent, createServer } from 'node:http';
import { createProxyServer } from 'http-proxy';

function parsePort(text: string | undefined): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new RangeError(`usage: node_http_proxy <listen port> <upstream port> (bad port '${text}')`);
  }
  return port;
}

function main(argv: readonly string[]): void {
  const listenPort = parsePort(argv[0]);
  const upstreamPort = parsePort(argv[1]);
  const proxy = createProxyServer({
    target: `http://127.0.0.1:${upstreamPort}`,
    agent: new Agent({ keepAlive: true, maxSockets: 64 }),
  });
  // Without a listener, one upstream failure would crash the process instead of failing a request.
  proxy.on('error', (_error, _req, res) => {
    if (res.headersSent) {
      res.destroy();
    } else {
      res.writeHead(502).end();
    }
  });
  createServer((req, res) => proxy.web(req, res)).listen(listenPort, '127.0.0.1');
}

main(process.argv.slice(2));
