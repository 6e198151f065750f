import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planRows, planServices, type Subject } from '../../bench/plan';

const everything = { subjects: new Set<Subject>(), groups: new Set<string>() };

test('every row: five HTTP subjects per body size and for the paced load, three TCP subjects, nginx and ours for HTTP/2 and TLS', () => {
  assert.deepEqual(
    planRows(everything).map((row) => `${row.group.id}:${row.label}`),
    [
      'http:direct (upstream)',
      'http:nginx',
      'http:node-http-proxy',
      'http:proxy',
      "http:proxy, operator's features",
      'http-16k:direct (upstream)',
      'http-16k:nginx',
      'http-16k:node-http-proxy',
      'http-16k:proxy',
      "http-16k:proxy, operator's features",
      'http-paced:direct (upstream)',
      'http-paced:nginx',
      'http-paced:node-http-proxy',
      'http-paced:proxy',
      "http-paced:proxy, operator's features",
      'tcp:direct (upstream)',
      'tcp:nginx stream',
      'tcp:proxy tcp_proxy',
      'h2:nginx',
      'h2:proxy',
      'h2-post:nginx',
      'h2-post:proxy',
      'tls:nginx',
      'tls:proxy',
      'tls-handshake:nginx',
      'tls-handshake:proxy',
    ],
  );
});

test('a selection narrows by subject and by group at once', () => {
  const rows = planRows({ subjects: new Set<Subject>(['node', 'proxy']), groups: new Set(['http-16k', 'tcp']) });
  assert.deepEqual(
    rows.map((row) => `${row.group.id}:${row.subject}`),
    ['http-16k:node', 'http-16k:proxy', 'tcp:proxy'],
  );
});

test('each subject is started once per layer and serves all of that layer’s rows', () => {
  const services = planServices(planRows({ subjects: new Set<Subject>(['nginx', 'proxy']), groups: new Set() }));
  assert.deepEqual(
    services.map((service) => `${service.subject}/${service.layer}:${service.rows.map((row) => row.group.id).join('+')}`),
    [
      'nginx/http:http+http-16k+http-paced',
      'proxy/http:http+http-16k+http-paced',
      'nginx/tcp:tcp',
      'proxy/tcp:tcp',
      'nginx/h2:h2+h2-post',
      'proxy/h2:h2+h2-post',
      'nginx/tls:tls+tls-handshake',
      'proxy/tls:tls+tls-handshake',
    ],
  );
});
