import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  NginxError,
  parseNginxBuild,
  reverseProxyConfig,
  streamProxyConfig,
  upstreamConfig,
  type NginxBuild,
} from '../../bench/nginx';

// Abridged `nginx -V` of Debian 12's nginx package.
const DEBIAN_BUILD = `nginx version: nginx/1.22.1
built with OpenSSL 3.0.9 30 May 2023
TLS SNI support enabled
configure arguments: --with-cc-opt='-g -O2' --prefix=/usr/share/nginx --conf-path=/etc/nginx/nginx.conf --modules-path=/usr/lib/nginx/modules --with-http_ssl_module --with-stream=dynamic --with-stream_ssl_module --with-stream_geoip_module=dynamic`;

const DYNAMIC: NginxBuild = { version: '1.22.1', stream: 'dynamic', modulesPath: '/usr/lib/nginx/modules' };

/** Config lines without indentation, to assert on directives rather than on layout. */
function directives(config: string): string[] {
  return config.split('\n').map((line) => line.trim());
}

test('reads the version and how the stream module is built', () => {
  assert.deepEqual(parseNginxBuild(DEBIAN_BUILD), DYNAMIC);
  const staticBuild = DEBIAN_BUILD.replace('--with-stream=dynamic', '--with-stream').replace(/ --modules-path=\S+/, '');
  assert.deepEqual(parseNginxBuild(staticBuild), { version: '1.22.1', stream: 'static', modulesPath: null });
  const without = DEBIAN_BUILD.replace('--with-stream=dynamic ', '');
  assert.equal(parseNginxBuild(without).stream, 'absent');
  assert.throws(() => parseNginxBuild('bash: nginx: command not found'), NginxError);
});

test('the upstream answers 13 bytes on / and serves the 16 KiB file, without access logs', () => {
  const lines = directives(upstreamConfig('/tmp/b/upstream', 8081));
  for (const expected of [
    'worker_processes 1;',
    'daemon off;',
    'access_log off;',
    'listen 127.0.0.1:8081;',
    'root /tmp/b/upstream/www;',
    'location = / { return 200 "Hello, World!"; }',
    'location = /16k { }',
  ]) {
    assert.ok(lines.includes(expected), `missing '${expected}'`);
  }
});

test('the reverse proxy keeps 64 idle HTTP/1.1 upstream connections', () => {
  const lines = directives(reverseProxyConfig('/tmp/b/nginx', 8082, 8081));
  for (const expected of [
    'worker_processes 1;',
    'access_log off;',
    'server 127.0.0.1:8081;',
    'keepalive 64;',
    'listen 127.0.0.1:8082;',
    'proxy_pass http://bench_upstream;',
    'proxy_http_version 1.1;',
    'proxy_set_header Connection "";',
  ]) {
    assert.ok(lines.includes(expected), `missing '${expected}'`);
  }
});

test('blocks are balanced and indented by depth', () => {
  const config = reverseProxyConfig('/tmp/b/nginx', 8082, 8081);
  const opened = (config.match(/\{/g) ?? []).length;
  assert.equal(opened, (config.match(/\}/g) ?? []).length);
  assert.ok(config.includes('\n            proxy_http_version 1.1;\n'), config);
});

test('the stream proxy loads a dynamic module first, needs none when static, and fails without one', () => {
  const dynamic = directives(streamProxyConfig('/tmp/b/stream', 8083, 8081, DYNAMIC));
  assert.equal(dynamic[1], 'load_module /usr/lib/nginx/modules/ngx_stream_module.so;');
  assert.ok(dynamic.includes('proxy_pass 127.0.0.1:8081;'));
  assert.ok(dynamic.includes('listen 127.0.0.1:8083;'));
  const staticConfig = streamProxyConfig('/tmp/b/stream', 8083, 8081, { ...DYNAMIC, stream: 'static' });
  assert.ok(!staticConfig.includes('load_module'));
  assert.throws(() => streamProxyConfig('/tmp/b/stream', 8083, 8081, { ...DYNAMIC, stream: 'absent' }), NginxError);
});

test('the HTTP/2 row listens with http2 (prior knowledge), the TLS rows with ssl and the run’s certificate', () => {
  const h2 = directives(reverseProxyConfig('/tmp/b/nginx', 8082, 8081, { kind: 'h2' }));
  assert.ok(h2.includes('listen 127.0.0.1:8082 http2;'));
  assert.ok(h2.includes('proxy_http_version 1.1;'));
  const tls = directives(reverseProxyConfig('/tmp/b/nginx', 8082, 8081, { kind: 'tls', certificatePath: '/tmp/b/c.pem', keyPath: '/tmp/b/k.pem' }));
  for (const expected of ['listen 127.0.0.1:8082 ssl;', 'ssl_certificate /tmp/b/c.pem;', 'ssl_certificate_key /tmp/b/k.pem;']) {
    assert.ok(tls.includes(expected), `missing '${expected}'`);
  }
});
