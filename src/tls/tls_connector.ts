// `proxy.transport_sockets.tls` for a cluster (Envoy's ClientSslSocketFactory): TLS over a new
// TCP connection, with the UpstreamTlsContext's SNI, ALPN, client certificate and protocol
// settings, and the peer checked as Envoy checks it before the connection is used. Outcomes
// are counted in the cluster's `ssl.*`; a host whose handshakes fail is logged once, with the
// reason, until one succeeds again.

import { constants } from 'node:crypto';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { atField } from '../config/errors';
import type { UpstreamTlsContextConfig } from '../config/model';
import type { Logger } from '../log/logger_api';
import { type ConnectRequest, type Connector, openTcp, type TcpOpener, TRANSPORT_READY } from '../network/connector';
import type { VerifyFailure } from './peer_verification';
import type { SecretSource } from './secret_store';
import type { SslSocketFactoryStats } from './ssl_socket_factory_stats';
import { curveName, type SslStats } from './ssl_stats';
import { TlsContext } from './tls_context';

/** Why a verification failure closed the connection, for the log line. */
const FAILURE_REASONS: Readonly<Record<VerifyFailure, string>> = {
  fail_verify_no_cert: 'the peer presented no certificate',
  fail_verify_error: 'the peer certificate does not verify against trusted_ca',
  fail_verify_san: 'no subject alt name of the peer certificate matches',
  fail_verify_cert_hash: 'the peer certificate matches no pinned hash or SPKI',
};

export class TlsConnector implements Connector {
  readonly name = 'tls';
  readonly readyEvent = TRANSPORT_READY;
  readonly supportsOnread = false;
  private readonly log: Logger;
  /** What the connector's connections are made with; the certificate watcher reloads it. */
  readonly context: TlsContext;
  /** Sessions to resume by destination (address and SNI), newest last, at most max_session_keys each. */
  private readonly sessions = new Map<string, Buffer[]>();
  /**
   * The material the sessions were made with: a context reloaded (its files, an SDS secret) is
   * a new one, whose connections resume none of the old one's sessions, as in Envoy, where a
   * session would skip the new checks of the peer.
   */
  private sessionsContext: tls.SecureContext | null = null;
  /** Hosts whose last handshake failed and was logged. */
  private readonly failingHosts = new Set<string>();

  /**
   * @param config the UpstreamTlsContext; FieldErrors are relative to the transport socket's typed_config
   * @param stats the cluster's `ssl.*`
   * @param factoryStats the cluster's `client_ssl_socket_factory.*`
   * @param secrets where the secrets the context names are found
   * @param log where a host's handshake failures are reported
   * @param tcp opens the connection TLS runs over
   */
  constructor(
    private readonly config: UpstreamTlsContextConfig,
    private readonly stats: SslStats,
    private readonly factoryStats: SslSocketFactoryStats,
    secrets: SecretSource,
    log: Logger,
    private readonly tcp: TcpOpener = openTcp,
  ) {
    this.log = log.forFile(__filename);
    // Envoy's allow_renegotiation=false: a server's renegotiation request fails the connection.
    const secureOptions = config.allowRenegotiation ? 0 : constants.SSL_OP_NO_RENEGOTIATION;
    this.context = atField('common_tls_context', () => new TlsContext(config.common, 'client', { secureOptions, secrets }));
  }

  connect(request: ConnectRequest): net.Socket {
    const secureContext = this.context.secureContext;
    const verifier = this.context.verifier;
    if (secureContext === null || verifier === null) return this.notReady(request);
    if (secureContext !== this.sessionsContext) {
      this.sessions.clear();
      this.sessionsContext = secureContext;
    }
    // TLS reads the socket itself: no `onread`.
    const raw = this.tcp({ ...request, onread: undefined });
    const options = request.transportSocketOptions;
    const serverName = options?.serverName ?? this.config.sni;
    const alpn = request.alpn ?? this.context.alpnProtocols;
    const destination = `${request.host}:${request.port}/${serverName}/${options?.key ?? ''}`;
    const saved = this.sessions.get(destination);
    const socket = tls.connect({
      socket: raw,
      secureContext,
      servername: serverName === '' ? undefined : serverName,
      ALPNProtocols: alpn.length === 0 ? undefined : [...alpn],
      session: saved?.[saved.length - 1],
      // The peer is checked below, as Envoy checks it: Node's own checks would refuse what Envoy accepts.
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
    });
    // tls.connect takes no allowHalfOpen: tcp_proxy's half-close needs it on the TLS stream too.
    socket.allowHalfOpen = request.allowHalfOpen;
    let tcpConnected = false;
    let ready = false;
    let verifyFailed = false;
    let lastError: Error | null = null;
    raw.once('connect', () => (tcpConnected = true));
    socket.on('error', (error) => (lastError ??= error));
    // Only a verified session is kept: resuming it skips the checks, as in Envoy. A TLS 1.3
    // ticket can come before or after the checks are done.
    let pendingSession: Buffer | null = null;
    if (this.config.maxSessionKeys > 0) {
      socket.on('session', (session: Buffer) => {
        if (ready) this.saveSession(destination, session, secureContext);
        else pendingSession = session;
      });
    }
    socket.once('secureConnect', () => {
      const resumed = socket.isSessionReused();
      const failure = resumed ? null : verifier.verify(
        {
          authorized: socket.authorized,
          authorizationError: (socket.authorizationError as unknown as string | null) ?? null,
          certificate: socket.getPeerX509Certificate(),
        },
        options?.subjectAltNames,
      );
      if (failure !== null) {
        verifyFailed = true;
        this.stats.counters[failure].inc();
        this.reportFailure(request, `${FAILURE_REASONS[failure]} (ssl.${failure})`);
        socket.destroy();
        return;
      }
      ready = true;
      if (pendingSession !== null) this.saveSession(destination, pendingSession, secureContext);
      this.chargeHandshake(socket, resumed);
      this.failingHosts.delete(hostKey(request));
      socket.emit(TRANSPORT_READY);
    });
    socket.once('close', () => {
      // A connection that reached TCP but not a verified TLS session failed its handshake.
      if (ready || verifyFailed || !tcpConnected) return;
      this.stats.counters.connection_error.inc();
      this.reportFailure(request, `${lastError === null ? 'the connection closed during the handshake' : errorReason(lastError)} (ssl.connection_error)`);
    });
    return socket;
  }

  /**
   * Envoy's NotReadySslSocket: while an SDS secret of the context has not come, a connection
   * fails at once, before any byte is sent.
   */
  private notReady(request: ConnectRequest): net.Socket {
    this.factoryStats.upstream_context_secrets_not_ready.inc();
    this.reportFailure(request, 'TLS error: Secret is not supplied by SDS');
    const socket = new net.Socket();
    process.nextTick(() => socket.destroy(new Error('TLS error: Secret is not supplied by SDS')));
    return socket;
  }

  private chargeHandshake(socket: tls.TLSSocket, resumed: boolean): void {
    const counters = this.stats.counters;
    if (resumed) counters.session_reused.inc();
    else if (socket.getPeerX509Certificate() === undefined) counters.no_certificate.inc();
    const curve = socket.getEphemeralKeyInfo();
    this.stats.chargeHandshake({
      version: socket.getProtocol() ?? 'unknown',
      cipher: socket.getCipher().name,
      curve: curve !== null && 'name' in curve && typeof curve.name === 'string' ? curveName(curve.name) : null,
    });
  }

  private saveSession(destination: string, session: Buffer, context: tls.SecureContext): void {
    // A session of a connection made before the context was reloaded is the old context's.
    if (context !== this.sessionsContext) return;
    let saved = this.sessions.get(destination);
    if (saved === undefined) this.sessions.set(destination, (saved = []));
    saved.push(session);
    if (saved.length > this.config.maxSessionKeys) saved.shift();
  }

  /** Once per host until a handshake with it succeeds: a failing host does not flood the log. */
  private reportFailure(request: ConnectRequest, reason: string): void {
    const key = hostKey(request);
    if (this.failingHosts.has(key)) return;
    this.failingHosts.add(key);
    this.log.warn(`TLS handshake with upstream ${key} failed: ${reason}`);
  }
}

/** OpenSSL's reason (`sslv3 alert handshake failure`), else Node's message. */
function errorReason(error: Error): string {
  const reason = (error as { reason?: unknown }).reason;
  return typeof reason === 'string' ? reason : error.message;
}

function hostKey(request: ConnectRequest): string {
  return net.isIPv6(request.host) ? `[${request.host}]:${request.port}` : `${request.host}:${request.port}`;
}
