// The HTTP/1.1 check (Envoy's HttpHealthCheckerImpl): `GET <path>` with the configured host and
// headers; the status must be in expected_statuses, `x-proxy-degraded` marks the host degraded,
// and with a service_name_matcher the host must name a matching cluster in
// `x-proxy-upstream-healthchecked-cluster`. An unparseable answer closes the connection and
// counts as a network failure, as a reset stream does in Envoy.

import type { Socket } from 'node:net';
import { utf8Bytes } from '../../../common/byte_string';
import type { HeaderKeyFormat, HttpHealthCheck } from '../../../config/model';
import { CodecError } from '../../../http/http1/codec_error';
import { properCaseHeaderKey } from '../../../http/http1/header_key_format';
import type { ResponseHead } from '../../../http/message';
import { ResponseParser } from '../../../http/http1/response_parser';
import { ACTIVE_FAILURE, type HealthProbe, NETWORK_FAILURE, type ProbeTarget } from './health_probe';
import type { CheckOutcome } from './verdict';

export const HEALTH_CHECK_USER_AGENT = 'proxy/HC';
export const DEGRADED_HEADER = 'x-proxy-degraded';
export const HEALTHCHECKED_CLUSTER_HEADER = 'x-proxy-upstream-healthchecked-cluster';

/**
 * The request every check of a cluster sends: headers to remove go first, then those to add;
 * names spelled as the cluster's http_protocol_options.header_key_format says, as Envoy's
 * health checker writes them with the cluster's HTTP/1 codec.
 */
export function httpCheckRequest(config: HttpHealthCheck, clusterName: string, keyFormat: HeaderKeyFormat = 'default'): Buffer {
  let headers: [string, string][] = [
    // The model's host is UTF-8 bytes already; the cluster's name is Unicode.
    ['host', config.host || utf8Bytes(clusterName)],
    ['user-agent', HEALTH_CHECK_USER_AGENT],
  ];
  headers = headers.filter(([name]) => name === 'host' || !config.requestHeadersToRemove.includes(name));
  for (const { key, value, append } of config.requestHeadersToAdd) {
    const name = key.toLowerCase();
    if (!append) headers = headers.filter(([n]) => n !== name);
    headers.push([name, value]);
  }
  const spell = keyFormat === 'proper_case_words' ? properCaseHeaderKey : (name: string) => name;
  const lines = headers.map(([name, value]) => `${spell(name)}: ${value}\r\n`).join('');
  return Buffer.from(`GET ${config.path} HTTP/1.1\r\n${lines}\r\n`, 'latin1');
}

/** The first value of `name` among a head's [name, value, ...] headers, or undefined. */
function headerValue(head: ResponseHead, name: string): string | undefined {
  for (let i = 0; i < head.headers.length; i += 2) if (head.headers[i] === name) return head.headers[i + 1];
  return undefined;
}

/**
 * A response's outcome. `verifyCluster` is null when the host's cluster is not checked, else
 * the matcher (the caller counts verify_cluster and asks the runtime first).
 */
export function httpCheckOutcome(head: ResponseHead, config: HttpHealthCheck, verifyCluster: ((cluster: string) => boolean) | null): CheckOutcome {
  if (!config.expectedStatuses.some(([start, end]) => head.status >= start && head.status < end)) return ACTIVE_FAILURE;
  const degraded = headerValue(head, DEGRADED_HEADER) !== undefined;
  if (verifyCluster !== null && !verifyCluster(headerValue(head, HEALTHCHECKED_CLUSTER_HEADER) ?? '')) return ACTIVE_FAILURE;
  return { kind: 'success', degraded };
}

export class HttpProbe implements HealthProbe {
  private socket: Socket | null = null;
  /** The connection carries data: connected, and for TLS handshaken with a verified peer. */
  private ready = false;
  private parser: ResponseParser | null = null;
  private head: ResponseHead | null = null;
  private done: ((outcome: CheckOutcome) => void) | null = null;

  constructor(
    private readonly target: ProbeTarget,
    private readonly request: Buffer,
    private readonly reuseConnection: boolean,
    private readonly judge: (head: ResponseHead) => CheckOutcome,
    /** The cluster's max_headers_count: a response with more header lines fails the check. */
    private readonly maxHeadersCount: number,
  ) {}

  check(done: (outcome: CheckOutcome) => void): void {
    this.done = done;
    this.head = null;
    if (this.socket === null) this.connect();
    this.parser!.expectResponse('GET', false);
    if (this.ready) this.socket!.write(this.request);
  }

  abort(): void {
    this.done = null;
    this.disconnect();
  }

  close(): void {
    this.abort();
  }

  private connect(): void {
    const { address, connector } = this.target;
    const socket = connector.connect({ host: address.address, port: address.port, allowHalfOpen: false });
    socket.setNoDelay(true);
    this.ready = false;
    socket.once(connector.readyEvent, () => {
      if (this.socket !== socket) return;
      this.ready = true;
      if (this.done !== null) socket.write(this.request);
    });
    const parser = new ResponseParser({
      onMessageHead: (head) => {
        this.head = head;
      },
      onMessageBody: () => {},
      onMessageComplete: () => this.onResponse(),
    }, this.maxHeadersCount);
    this.socket = socket;
    this.parser = parser;
    socket.on('data', (data: Buffer) => {
      if (this.socket !== socket) return;
      // Bytes nobody asked for are as bad as bytes that do not parse.
      if (this.done === null) return this.fail();
      try {
        parser.execute(data);
      } catch (error) {
        if (!(error instanceof CodecError)) throw error;
        this.fail();
      }
    });
    socket.on('end', () => {
      if (this.socket !== socket) return;
      try {
        parser.finish();
      } catch (error) {
        if (!(error instanceof CodecError)) throw error;
      }
      this.fail();
    });
    // Refused, reset: 'close' follows and fails the check in flight.
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.socket === socket) this.fail();
    });
  }

  private onResponse(): void {
    const head = this.head;
    const done = this.done;
    if (head === null || done === null) return this.fail();
    this.done = null;
    if (!this.reuseConnection || head.connectionClose) this.disconnect();
    done(this.judge(head));
  }

  /** The connection broke or misbehaved: it goes, and the check in flight is a network failure. */
  private fail(): void {
    const done = this.done;
    this.done = null;
    this.disconnect();
    done?.(NETWORK_FAILURE);
  }

  private disconnect(): void {
    this.socket?.destroy();
    this.socket = null;
    this.parser = null;
  }
}
