// A filter chain's TLS transport socket (Envoy's ServerSslSocketFactory): terminates TLS on an
// accepted connection with the chain's context as last (re)loaded, asks for and checks a client
// certificate when the context verifies one, and counts each handshake's outcome in the
// listener's `ssl.*` stats.

import type * as net from 'node:net';
import * as tls from 'node:tls';
import type { DownstreamTlsContextConfig } from '../config/model';
import type { Counter, Scope } from '../stats/stats';
import type { PeerVerifier, VerifyFailure } from './peer_verification';
import type { SecretSource } from './secret_store';
import type { SslSocketFactoryStats } from './ssl_socket_factory_stats';
import { TlsContext } from './tls_context';

export class DownstreamSslStats {
  readonly handshake: Counter;
  readonly connection_error: Counter;
  readonly no_certificate: Counter;
  readonly session_reused: Counter;
  readonly fail_verify_no_cert: Counter;
  readonly fail_verify_error: Counter;
  readonly fail_verify_san: Counter;
  readonly fail_verify_cert_hash: Counter;

  constructor(private readonly scope: Scope) {
    this.handshake = scope.counter('handshake');
    this.connection_error = scope.counter('connection_error');
    this.no_certificate = scope.counter('no_certificate');
    this.session_reused = scope.counter('session_reused');
    this.fail_verify_no_cert = scope.counter('fail_verify_no_cert');
    this.fail_verify_error = scope.counter('fail_verify_error');
    this.fail_verify_san = scope.counter('fail_verify_san');
    this.fail_verify_cert_hash = scope.counter('fail_verify_cert_hash');
  }

  /** ssl.versions.<version> and ssl.ciphers.<cipher> of a completed handshake. */
  negotiated(socket: tls.TLSSocket): void {
    const version = socket.getProtocol();
    if (version !== null) this.scope.counter(`versions.${version}`).inc();
    const cipher = socket.getCipher();
    if (cipher !== undefined) this.scope.counter(`ciphers.${cipher.standardName}`).inc();
  }
}

export class DownstreamTlsSocketFactory {
  readonly context: TlsContext;

  /**
   * @param stats the listener's `ssl` scope
   * @param factoryStats the listener's `server_ssl_socket_factory` scope
   * @param secrets where the secrets the context names are found
   * @throws FieldError relative to common_tls_context when the context does not load
   */
  constructor(
    private readonly config: DownstreamTlsContextConfig,
    private readonly stats: DownstreamSslStats,
    private readonly factoryStats: SslSocketFactoryStats,
    secrets: SecretSource,
  ) {
    this.context = new TlsContext(config.common, 'server', { requireClientCertificate: config.requireClientCertificate, secrets });
  }

  /**
   * Starts the handshake on `socket` (whose first bytes may have been read and put back).
   * `onSecure` gets the TLS socket once the handshake and the peer's checks pass; otherwise the
   * connection is closed and counted. Null, the socket closed, while an SDS secret of the
   * context has not come (Envoy's NotReadySslSocket).
   */
  secure(socket: net.Socket, onSecure: (socket: tls.TLSSocket) => void): tls.TLSSocket | null {
    const secureContext = this.context.secureContext;
    const verifier = this.context.verifier;
    if (secureContext === null || verifier === null) {
      this.factoryStats.downstream_context_secrets_not_ready.inc();
      socket.destroy();
      return null;
    }
    const alpn = this.context.alpnProtocols;
    const tlsSocket = new tls.TLSSocket(socket, {
      isServer: true,
      secureContext,
      ALPNProtocols: alpn.length === 0 ? undefined : [...alpn],
      requestCert: verifier.verifies,
      // The verifier decides, after the handshake, as Envoy's verify callback does.
      rejectUnauthorized: false,
    });
    let handshakeDone = false;
    tlsSocket.on('error', () => {
      if (!handshakeDone) this.stats.connection_error.inc();
      tlsSocket.destroy();
    });
    tlsSocket.once('secure', () => {
      handshakeDone = true;
      const failure = this.check(tlsSocket, verifier);
      if (failure !== null) {
        if (failure !== 'connection_error') this.stats[failure].inc();
        this.stats.connection_error.inc();
        tlsSocket.destroy();
        return;
      }
      const stats = this.stats;
      stats.handshake.inc();
      if (tlsSocket.isSessionReused()) stats.session_reused.inc();
      if (tlsSocket.getPeerX509Certificate() === undefined) stats.no_certificate.inc();
      stats.negotiated(tlsSocket);
      markEstablished(tlsSocket);
      onSecure(tlsSocket);
    });
    return tlsSocket;
  }

  private check(socket: tls.TLSSocket, verifier: PeerVerifier): VerifyFailure | 'connection_error' | null {
    // require_sni: a client that names no server is refused.
    if (this.config.requireSni && !socket.servername) return 'connection_error';
    if (!verifier.verifies) return null;
    const error = chainVerifyError(socket);
    return verifier.verify({ authorized: error === null, authorizationError: error, certificate: socket.getPeerX509Certificate() });
  }
}

/**
 * Clears `secureConnecting`, as tls.Server does once its handshake handler is done. A TLSSocket
 * made outside a tls.Server keeps it set for good, and node:http2 then waits for a
 * 'secureConnect' that a server socket never emits: the session never starts.
 */
function markEstablished(socket: tls.TLSSocket): void {
  (socket as tls.TLSSocket & { secureConnecting: boolean }).secureConnecting = false;
}

/**
 * OpenSSL's verdict on the peer's chain (e.g. CERT_HAS_EXPIRED), or null when it verified. A
 * TLSSocket made outside a tls.Server never sets `authorized`, so this asks its handle, as the
 * server's own secure handler does.
 */
export function chainVerifyError(socket: tls.TLSSocket): string | null {
  const handle = (socket as unknown as { _handle: { verifyError(): (Error & { code?: string }) | null } | null })._handle;
  const error = handle?.verifyError() ?? null;
  return error === null ? null : (error.code ?? error.message);
}
