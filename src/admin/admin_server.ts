// The admin HTTP listener: exact-path dispatch over a handler table, Envoy's fallback headers,
// who may call what (admin_access.ts, with admin.security), the method rules (method_rule.ts),
// the browser checks (browser_guard.ts) and the admin access log.

import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import * as os from 'node:os';
import { TLSSocket } from 'node:tls';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type ConnectionIds, headerDump } from '../log/connection_log';
import type { AdminRole } from '../config/model';
import type { Logger } from '../log/logger_api';
import type { Counter, Gauge, Histogram, Scope } from '../stats/stats';
import { formatAccessLogLine } from './access_log_format';
import { AccessVerdict, AdminCaller, DENIAL_REASONS, DenialReason } from './admin_access';
import type { AdminProtection } from './admin_protection';
import { AdminIdentity, browserRefusal } from './browser_guard';
import { requiredRole } from './endpoint_roles';
import { methodVerdict } from './method_rule';
import { parseQuery, QueryParams, splitTarget } from './query';

export interface AdminRequest {
  readonly method: string;
  readonly path: string;
  /** Percent-decoded when the handler asked for it. */
  readonly query: QueryParams;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  /** The caller's role with admin.security; null: anyone may do anything (the home page shows every mutation). */
  readonly role: AdminRole | null;
}

export interface AdminResponse {
  readonly status: number;
  /**
   * A string is sent with a content-length. Chunks are streamed (chunked transfer coding) one
   * at a time, with a turn of the event loop between two, so that a large body (/stats) never
   * holds the supervisor for long; an empty chunk is only such a turn.
   */
  readonly body: string | Iterable<string | Uint8Array>;
  /** Default `text/plain; charset=UTF-8`. */
  readonly contentType?: string;
  /** Runs once the response has been written (e.g. /quitquitquit's shutdown). */
  readonly after?: () => void;
  /** More response headers (e.g. the home page's content-security-policy). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A query parameter the home page offers a field for. */
export interface AdminParam {
  readonly name: string;
  readonly help: string;
  /** A flag is present or not (a checkbox); a text is typed; a choice is one of `choices`. */
  readonly kind: 'flag' | 'text' | 'choice';
  readonly choices?: readonly string[];
}

export interface AdminHandler {
  readonly path: string;
  readonly help: string;
  readonly mutatesState: boolean;
  readonly decodeQuery: boolean;
  /** The parameters worth a field on the home page. */
  readonly params?: readonly AdminParam[];
  handle(req: AdminRequest): AdminResponse | Promise<AdminResponse>;
}

/** Where admin requests are logged, one line each (an access log file). */
export interface AccessLogSink {
  write(line: string): void;
}

export const TEXT = 'text/plain; charset=UTF-8';
export const JSON_TYPE = 'application/json';
export const HTML = 'text/html; charset=UTF-8';
/** Any HTML page that does not set its own: nothing loads, nothing frames it. */
const DEFAULT_HTML_CSP = "default-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const FORM = 'application/x-www-form-urlencoded';
const FAVICON = '/favicon.ico';

/** `/help`'s body: the handlers sorted by byte order, as Envoy prints them. */
export function helpText(handlers: readonly AdminHandler[]): string {
  const sorted = [...handlers].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return 'admin commands are:\n' + sorted.map((h) => `  ${h.path}: ${h.help}\n`).join('');
}

/** How much of a streamed body may wait in the socket's buffer before rendering pauses. */
const STREAM_AHEAD_BYTES = 1024 * 1024;

function drainedOrClosed(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

interface AdminStats {
  readonly cxTotal: Counter;
  readonly cxActive: Gauge;
  /** The same under the handler's name, `main_thread`, as Envoy's admin listener counts them. */
  readonly handlerCxTotal: Counter;
  readonly handlerCxActive: Gauge;
  readonly rqTotal: Counter;
  readonly rqClass: readonly Counter[];
  readonly rqTime: Histogram;
  readonly httpCxLength: Histogram;
  readonly listenerCxLength: Histogram;
  /** With admin.security only: every refusal, and each by its reason. */
  readonly authDenied: { readonly total: Counter; readonly byReason: Readonly<Record<DenialReason, Counter>> } | null;
}

function authDeniedStats(http: Scope): AdminStats['authDenied'] {
  const byReason = http.scope('auth_denied');
  return { total: http.counter('auth_denied'), byReason: Object.fromEntries(DENIAL_REASONS.map((r) => [r, byReason.counter(r)])) as Record<DenialReason, Counter> };
}

function adminStats(http: Scope, listener: Scope, secured: boolean): AdminStats {
  const handler = listener.scope('main_thread');
  return {
    authDenied: secured ? authDeniedStats(http) : null,
    cxTotal: listener.counter('downstream_cx_total'),
    cxActive: listener.gauge('downstream_cx_active'),
    handlerCxTotal: handler.counter('downstream_cx_total'),
    handlerCxActive: handler.gauge('downstream_cx_active'),
    rqTotal: http.counter('downstream_rq_total'),
    rqClass: [1, 2, 3, 4, 5].map((c) => http.counter(`downstream_rq_${c}xx`)),
    rqTime: http.histogram('downstream_rq_time', 'milliseconds'),
    httpCxLength: http.histogram('downstream_cx_length_ms', 'milliseconds'),
    listenerCxLength: listener.histogram('downstream_cx_length_ms', 'milliseconds'),
  };
}

/** The admin listener's connection and stream lines, as Envoy logs its admin listener's. */
export interface AdminTrafficLog {
  readonly ids: ConnectionIds;
  /** `conn_handler`: `[C<id>] new connection`. */
  readonly connHandler: Logger;
  /** `http`: each request's headers. */
  readonly http: Logger;
}

/** Answers a refused request: one line, and how to authenticate when that is what was missing. */
function deniedResponse(verdict: Extract<AccessVerdict, { kind: 'denied' }>): AdminResponse {
  return { status: verdict.status, body: `${verdict.message}\n`, headers: verdict.status === 401 ? { 'www-authenticate': 'Bearer realm="proxy admin"' } : undefined };
}

export class AdminServer {
  private readonly server: http.Server;
  /** With TLS: accepts, and hands `server` each connection once it is secured. */
  private readonly tlsListener: net.Server | null;
  /** Each open connection's id, for its requests' log lines. */
  private readonly connectionIds = new WeakMap<Socket, number>();
  private readonly byPath = new Map<string, AdminHandler>();
  private readonly stats: AdminStats;
  private bound: AddressInfo | null = null;
  private streams = 0;
  private readonly log: Logger;
  private readonly traffic: AdminTrafficLog;

  constructor(
    private readonly handlers: readonly AdminHandler[],
    stats: Scope,
    log: Logger,
    private readonly accessLog: AccessLogSink,
    traffic: AdminTrafficLog,
    /** A handler or renderer threw: a bug of ours, which the server survives (counted, see caught_failures.ts). */
    private readonly onCaughtFailure: (error: unknown) => void,
    /** admin.security; null: open to whoever reaches the listener, as in Envoy. */
    private readonly protection: AdminProtection | null = null,
  ) {
    this.log = log.forFile(__filename);
    this.traffic = { ids: traffic.ids, connHandler: traffic.connHandler.forFile(__filename), http: traffic.http.forFile(__filename) };
    for (const h of handlers) this.byPath.set(h.path, h);
    this.stats = adminStats(stats.scope('http.admin'), stats.scope('listener.admin'), protection !== null);
    this.server = http.createServer((req, res) => this.serve(req, res));
    const tls = protection?.tls ?? null;
    // A connection counts from its accept, as Envoy's listener counts it: with TLS, before its handshake.
    this.tlsListener =
      tls === null
        ? null
        : net.createServer((socket) => {
            this.countConnection(socket);
            tls.secure(socket, (secured) => this.server.emit('connection', secured));
          });
    this.server.on('connection', (socket: Socket) => {
      const id = this.traffic.ids.nextConnection();
      this.connectionIds.set(socket, id);
      if (this.traffic.connHandler.enabled('debug')) this.traffic.connHandler.debug(`[C${id}] new connection`);
      if (this.tlsListener === null) this.countConnection(socket);
    });
    this.server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    });
  }

  private countConnection(socket: Socket): void {
    this.stats.cxTotal.inc();
    this.stats.cxActive.inc();
    this.stats.handlerCxTotal.inc();
    this.stats.handlerCxActive.inc();
    const openedMs = performance.now();
    socket.once('close', () => {
      this.stats.cxActive.dec();
      this.stats.handlerCxActive.dec();
      const length = performance.now() - openedMs;
      this.stats.httpCxLength.recordValue(length);
      this.stats.listenerCxLength.recordValue(length);
    });
  }

  async listen(address: string, port: number): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      const listener = this.tlsListener ?? this.server;
      listener.once('error', reject);
      listener.listen({ host: address, port, exclusive: true }, () => {
        listener.off('error', reject);
        resolve();
      });
    });
    this.bound = (this.tlsListener ?? this.server).address() as AddressInfo;
    return this.bound;
  }

  /** Stops accepting and drops idle keep-alive connections; in-flight responses finish. */
  async close(): Promise<void> {
    // With TLS the HTTP server never listens: it only holds the connections.
    const listener = this.tlsListener ?? this.server;
    await new Promise<void>((resolve) => {
      listener.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.traffic.http.enabled('debug')) this.logRequestHeaders(req);
    const start = new Date();
    const chunks: Buffer[] = [];
    let received = 0;
    req.on('data', (c: Buffer) => {
      received += c.length;
      // An admin request body is a form at most; a larger one is not ours to buffer.
      if (received <= 1 << 20) chunks.push(c);
    });
    req.on('end', () => {
      const who = this.authenticate(req);
      const identity = who === null ? undefined : who.kind === 'allowed' ? who.caller.identity : who.identity;
      const answer = who?.kind === 'denied' ? Promise.resolve(this.refuse(req, who)) : this.dispatch(req, Buffer.concat(chunks), who?.caller ?? null);
      void answer.then(async (r) => {
        const contentType = r.contentType ?? TEXT;
        const headers: http.OutgoingHttpHeaders = {
          'content-type': contentType,
          'cache-control': 'no-cache, max-age=0',
          'x-content-type-options': 'nosniff',
          ...(contentType === HTML ? { 'x-frame-options': 'DENY', 'content-security-policy': DEFAULT_HTML_CSP } : {}),
          ...r.headers,
        };
        let sent = 0;
        if (typeof r.body === 'string') {
          const body = Buffer.from(r.body);
          res.writeHead(r.status, { ...headers, 'content-length': body.length });
          res.end(req.method === 'HEAD' ? undefined : body, () => r.after?.());
          if (req.method !== 'HEAD') sent = body.length;
        } else {
          res.writeHead(r.status, headers);
          if (req.method !== 'HEAD') sent = await this.stream(res, r.body, req.url ?? '-');
          res.end(() => r.after?.());
        }
        this.record(req, r.status, received, sent, start, identity);
      });
    });
  }

  /** Envoy's `request headers complete` line, header names in lower case as its codec has them. */
  private logRequestHeaders(req: http.IncomingMessage): void {
    const connection = this.connectionIds.get(req.socket);
    const stream = this.traffic.ids.nextStream();
    const length = req.headers['content-length'];
    const endStream = (length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined;
    const pairs = [':authority', req.headers.host ?? '', ':path', req.url ?? '', ':method', req.method ?? ''];
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i].toLowerCase();
      // A bearer token is a password: the log says one was sent, never which.
      if (name !== 'host') pairs.push(name, name === 'authorization' ? '[redacted]' : raw[i + 1]);
    }
    this.traffic.http.debug(`[C${connection}][S${stream}] request headers complete (end_stream=${endStream}):\n${headerDump(pairs)}`);
  }

  /** Responses whose bodies are being streamed now (a /stats render, say). */
  get streaming(): number {
    return this.streams;
  }

  /** Writes the chunks as the client takes them; stops when it goes away. Returns bytes written. */
  private async stream(res: http.ServerResponse, chunks: Iterable<string | Uint8Array>, target: string): Promise<number> {
    let sent = 0;
    let closed = res.destroyed;
    res.once('close', () => (closed = true));
    this.streams++;
    try {
      // Leaving the loop early (break) ends the generator, so a renderer stops with the client.
      for (const chunk of chunks) {
        if (closed) break;
        if (chunk.length === 0) {
          await nextTurn();
          continue;
        }
        sent += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
        res.write(chunk);
        // Rendering the next chunk while the kernel sends this one keeps both cores busy; the
        // bytes waiting stay bounded all the same.
        await (res.writableLength < STREAM_AHEAD_BYTES ? nextTurn() : drainedOrClosed(res));
      }
    } catch (e) {
      this.onCaughtFailure(e);
      // Too late for a 500: the client sees the response cut short instead.
      this.log.error(`admin response to ${target} failed: ${(e as Error).stack ?? String(e)}`);
      res.destroy();
    } finally {
      this.streams--;
    }
    return sent;
  }

  /** Who is calling, or why not served; null without admin.security. */
  private authenticate(req: http.IncomingMessage): AccessVerdict | null {
    const access = this.protection?.access;
    if (access === undefined) return null;
    const socket = req.socket;
    return access.authenticate({
      address: socket.remoteAddress ?? '',
      authorization: req.headers.authorization,
      certificate: socket instanceof TLSSocket ? socket.getPeerX509Certificate() : undefined,
    });
  }

  private refuse(req: http.IncomingMessage, verdict: Extract<AccessVerdict, { kind: 'denied' }>): AdminResponse {
    const denied = this.stats.authDenied!;
    denied.total.inc();
    denied.byReason[verdict.reason].inc();
    if (this.log.enabled('debug')) this.log.debug(`admin refused ${req.method} ${splitTarget(req.url ?? '/').path} (${verdict.reason}, ${verdict.identity}): ${verdict.message}`);
    return deniedResponse(verdict);
  }

  /** @param caller who is calling, with admin.security; null: anyone may do anything */
  private async dispatch(req: http.IncomingMessage, body: Buffer, caller: AdminCaller | null): Promise<AdminResponse> {
    const method = req.method ?? 'GET';
    const { path, query } = splitTarget(req.url ?? '/');
    // A browser asks for an icon with every text page it shows: "none" rather than an error on
    // its console. Not a command, so not in /help.
    if (path === FAVICON && (method === 'GET' || method === 'HEAD')) return { status: 204, body: '' };
    const handler = this.byPath.get(path);
    if (!handler) return { status: 404, body: 'invalid path. ' + helpText(this.handlers) };
    // A home page form posts its fields as a body: they count as the query (Envoy's /runtime_modify rule, for every endpoint).
    const formQuery = query === '' && method === 'POST' && req.headers['content-type']?.split(';')[0]?.trim() === FORM ? body.toString() : query;
    const params = parseQuery(formQuery, handler.decodeQuery);
    if (caller !== null) {
      const allowed = this.protection!.access.authorize(caller, requiredRole(path, params));
      if (allowed.kind === 'denied') return this.refuse(req, allowed);
    }
    const verdict = methodVerdict(method, handler.mutatesState);
    if (verdict.kind === 'refuse') return { status: 405, body: verdict.reason, headers: { allow: verdict.allow } };
    const refusal = browserRefusal(
      { host: req.headers.host, origin: req.headers.origin, secFetchSite: header(req.headers['sec-fetch-site']) },
      handler.mutatesState,
      this.identity(),
    );
    if (refusal !== null) {
      this.log.warn(`admin refused ${method} ${path}: ${refusal}`);
      return { status: 403, body: `${refusal}\n` };
    }
    if (verdict.kind === 'run_deprecated') {
      // The spec keeps mutations over GET working for a while, with a warning.
      this.log.warn(`admin path "${path}" mutates state, method=${method} rather than POST`);
    }
    try {
      return await handler.handle({ method, path, query: params, headers: req.headers, body, role: caller?.role ?? null });
    } catch (e) {
      this.onCaughtFailure(e);
      this.log.error(`admin handler ${path} failed: ${(e as Error).stack ?? String(e)}`);
      return { status: 500, body: `${(e as Error).message}\n` };
    }
  }

  /** Where this admin listens; a wildcard bind answers on every local address, looked up now. */
  private identity(): AdminIdentity {
    const bound = this.bound!;
    const wildcard = bound.address === '0.0.0.0' || bound.address === '::';
    const addresses = wildcard
      ? Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address.toLowerCase()))
      : [bound.address.toLowerCase()];
    return { port: bound.port, addresses: new Set(addresses) };
  }

  private record(req: http.IncomingMessage, status: number, received: number, sent: number, start: Date, identity: string | undefined): void {
    this.stats.rqTotal.inc();
    this.stats.rqTime.recordValue(Date.now() - start.getTime());
    const cls = Math.floor(status / 100);
    if (cls >= 1 && cls <= 5) this.stats.rqClass[cls - 1]!.inc();
    const h = req.headers;
    this.accessLog.write(
      formatAccessLogLine({
        startTime: start,
        method: req.method ?? '-',
        path: req.url ?? '-',
        protocol: `HTTP/${req.httpVersion}`,
        status,
        bytesReceived: received,
        bytesSent: sent,
        durationMs: Date.now() - start.getTime(),
        forwardedFor: h['x-forwarded-for'] as string | undefined,
        userAgent: h['user-agent'],
        requestId: h['x-request-id'] as string | undefined,
        authority: h.host,
        identity,
      }),
    );
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
