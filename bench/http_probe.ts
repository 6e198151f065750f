// A service is ready when it answers the benchmark's own request correctly: a listening socket
// is not enough (our supervisor binds before its workers accept), and a proxy that answers 503
// must fail here, clearly, rather than post a fast row.

import { get } from 'node:http';
import { connect as connectHttp2 } from 'node:http2';
import { get as getTls } from 'node:https';
import { describeExit, outputTail, type StartedProcess } from './process_group';

export interface ProbeTarget {
  readonly port: number;
  readonly path: string;
  readonly expectedBody: string;
  /** How the service is spoken to; HTTP/1.1 when unset. */
  readonly protocol?: ProbeProtocol;
}

/** HTTP/1.1, HTTP/2 with prior knowledge, or HTTP/1.1 over TLS (the bench's certificate is self-signed). */
export type ProbeProtocol = 'http1' | 'h2' | 'https';

export class ServiceStartError extends Error {
  override readonly name = 'ServiceStartError';
}

const RETRY_INTERVAL_MS = 100;
const REQUEST_TIMEOUT_MS = 1000;
// Enough for a Node stack trace with its message line on top. The first line of an error says what
// failed; the process's own last words follow it.
const LOG_LINES_SHOWN = 40;

/** Retries until a 200 with the expected body, the process exits, or the timeout passes. */
export async function waitUntilServing(child: StartedProcess, target: ProbeTarget, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem = 'no attempt';
  for (;;) {
    if (child.exitStatus()) {
      // Its output is complete only once its pipes have closed.
      const status = await child.exited;
      throw new ServiceStartError(`${child.label} ${describeExit(status)} before serving${outputTail(child, LOG_LINES_SHOWN)}`);
    }
    try {
      const response = await fetchOnce(target.port, target.path, target.protocol ?? 'http1');
      if (response.status === 200 && response.body === target.expectedBody) return;
      lastProblem = `status ${response.status}, ${response.body.length}-byte body`;
    } catch (error) {
      lastProblem = (error as Error).message;
    }
    if (Date.now() >= deadline) {
      throw new ServiceStartError(
        `${child.label} did not answer GET ${target.path} on 127.0.0.1:${target.port} with 200 within ` +
          `${timeoutMs / 1000} s (last: ${lastProblem})${outputTail(child, LOG_LINES_SHOWN)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_INTERVAL_MS));
  }
}

/** One GET to 127.0.0.1:`port`, no keep-alive, bounded by REQUEST_TIMEOUT_MS. */
export function fetchOnce(port: number, path: string, protocol: ProbeProtocol = 'http1'): Promise<{ status: number; body: string }> {
  if (protocol === 'h2') return fetchOnceHttp2(port, path);
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, path, agent: false, timeout: REQUEST_TIMEOUT_MS } as const;
    const onResponse = (response: import('node:http').IncomingMessage): void => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    };
    const request = protocol === 'https' ? getTls({ ...options, rejectUnauthorized: false }, onResponse) : get(options, onResponse);
    request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    request.on('error', reject);
  });
}

function fetchOnceHttp2(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = connectHttp2(`http://127.0.0.1:${port}`);
    const timer = setTimeout(() => session.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      session.destroy();
      reject(error);
    };
    session.on('error', fail);
    const stream = session.request({ ':path': path });
    let status = 0;
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('error', fail);
    stream.on('end', () => {
      clearTimeout(timer);
      session.close();
      resolve({ status, body });
    });
  });
}
