import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { makeCa, makeLeaf } from '../helpers/certificates';
import { sessionIdOf, TlsSocketConnectionInfo, urlEncodePem } from '../../src/tls/ssl_connection_info';
import { downstreamConnectionInfo } from '../../src/stream_info/downstream_connection';

test('a TLS session\'s facts, read from the server\'s socket, in Envoy\'s spellings', { timeout: 30_000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-ssl-info-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const ca = makeCa(dir, 'ca', 2);
  const server = makeLeaf(dir, ca, 'server', 'DNS:server.example,URI:spiffe://server', 2);
  const client = makeLeaf(dir, ca, 'client', 'DNS:client.example,URI:spiffe://a,URI:spiffe://b', 2);
  const read = (file: string) => fs.readFileSync(file);

  const accepted = new Promise<tls.TLSSocket>((resolve) => {
    const listener = tls.createServer(
      { cert: read(server.cert), key: read(server.key), ca: read(ca.cert), requestCert: true, maxVersion: 'TLSv1.2', secureOptions: constants.SSL_OP_NO_TICKET },
      resolve,
    );
    t.after(() => listener.close());
    listener.listen(0, '127.0.0.1', () => {
      const socket = tls.connect({
        port: (listener.address() as { port: number }).port,
        host: '127.0.0.1',
        servername: 'sni.example',
        cert: read(client.cert),
        key: read(client.key),
        ca: read(ca.cert),
        checkServerIdentity: () => undefined,
      });
      t.after(() => socket.destroy());
    });
  });
  const socket = await accepted;
  t.after(() => socket.destroy());

  const connection = downstreamConnectionInfo(socket, 7);
  assert.equal(connection.id, 7);
  assert.equal(connection.requestedServerName, 'sni.example');
  assert.match(connection.localAddress, /^127\.0\.0\.1:\d+$/);
  assert.match(connection.directRemoteAddress, /^127\.0\.0\.1:\d+$/);
  const info = connection.ssl!;
  assert.ok(info instanceof TlsSocketConnectionInfo);
  const peer = new X509Certificate(read(client.cert));
  assert.equal(info.peerSubject, 'CN=client');
  assert.equal(info.peerIssuer, 'CN=ca');
  assert.deepEqual(info.peerUriSans, ['spiffe://a', 'spiffe://b']);
  assert.deepEqual(info.peerDnsSans, ['client.example']);
  assert.equal(info.peerSerial, peer.serialNumber.toLowerCase());
  assert.equal(info.peerFingerprint256, peer.fingerprint256.replace(/:/g, '').toLowerCase());
  assert.equal(info.peerFingerprint1, peer.fingerprint.replace(/:/g, '').toLowerCase());
  assert.equal(info.peerCertificatePem, urlEncodePem(peer.toString()));
  assert.ok(!info.peerCertificatePem!.includes('\n') && info.peerCertificatePem!.startsWith('-----BEGIN%20CERTIFICATE-----%0A'));
  assert.equal(info.peerValidFrom!.getTime(), new Date(peer.validFrom).getTime());
  assert.equal(info.peerExpiration!.getTime(), new Date(peer.validTo).getTime());
  assert.equal(info.localSubject, 'CN=server');
  assert.deepEqual(info.localUriSans, ['spiffe://server']);
  assert.equal(info.tlsVersion, 'TLSv1.2');
  assert.match(info.cipherSuite!, /^ECDHE-RSA-AES\d+-GCM-SHA\d+$/);
  // Without session tickets the server names the session.
  assert.match(info.sessionId!, /^[0-9a-f]{64}$/);
});

test('the session id inside a serialized SSL_SESSION; null for what is not one', () => {
  // SEQUENCE { INTEGER 1, INTEGER 0x0303, OCTET STRING c02f, OCTET STRING abcd, ... }
  const der = Buffer.from('3010020101020203030402c02f0402abcd0400', 'hex');
  assert.equal(sessionIdOf(der), 'abcd');
  assert.equal(sessionIdOf(Buffer.from('300a020101020203030402c02f', 'hex')), null);
  assert.equal(sessionIdOf(Buffer.from('3010020101020203030402c02f0400', 'hex')), null);
  assert.equal(sessionIdOf(Buffer.from('0400', 'hex')), null);
});
