import assert from 'node:assert/strict';
import { test } from 'node:test';
import { properCaseHead, properCaseHeaderKey } from '../../src/http/http1/header_key_format';

test('proper_case_words: a letter after anything but a letter or digit is upper-cased', () => {
  const cases: [string, string][] = [
    ['content-type', 'Content-Type'],
    ['x-proxy-upstream-service-time', 'X-Proxy-Upstream-Service-Time'],
    ['date', 'Date'],
    ['x_my.header', 'X_My.Header'],
    // After a digit, as after a letter, the next letter stays as it is.
    ['x-2fa-token', 'X-2fa-Token'],
    ['3d-view', '3d-View'],
    ['ALREADY-Upper', 'ALREADY-Upper'],
    ['a', 'A'],
    ['', ''],
  ];
  for (const [name, expected] of cases) assert.equal(properCaseHeaderKey(name), expected, name);
});

test('a whole head: names proper-cased, the status line and values untouched', () => {
  const head = 'HTTP/1.1 200 OK\r\ncontent-type: text/plain; a=b:c\r\nx-thing: some-value\r\n\r\n';
  assert.equal(properCaseHead(head), 'HTTP/1.1 200 OK\r\nContent-Type: text/plain; a=b:c\r\nX-Thing: some-value\r\n\r\n');
  assert.equal(properCaseHead('HTTP/1.1 204 No Content\r\n\r\n'), 'HTTP/1.1 204 No Content\r\n\r\n');
});
