import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FieldError } from '../../src/config/errors';
import { RequestHead } from '../../src/http/message';
import { type HeaderFormatContext, parseHeaderFormat } from '../../src/filters/http/header_format';
import { HeaderMutator } from '../../src/filters/http/header_mutator';
import { forwardedForOf, trustedClient } from '../../src/http/trusted_client';

function context(headers: string[] = [], useRemoteAddress = true): HeaderFormatContext {
  const head = new RequestHead('GET', '/', false);
  head.headers.push(...headers);
  return {
    head,
    connection: { remoteAddress: '10.0.0.7', remotePort: 40000, localAddress: '127.0.0.1', localPort: 8080 },
    client: trustedClient({ useRemoteAddress, xffNumTrustedHops: 0 }, '10.0.0.7', 40000, forwardedForOf(head)),
    protocol: 'HTTP/1.1',
    hostname: 'proxy-host',
  };
}

const format = (text: string, c = context()): string => parseHeaderFormat(text)(c);

test('literal text, %% for %, and the variables a request tells', () => {
  assert.equal(format(''), '');
  assert.equal(format('plain'), 'plain');
  assert.equal(format('100%% sure'), '100% sure');
  assert.equal(format('%DOWNSTREAM_REMOTE_ADDRESS%'), '10.0.0.7:40000');
  assert.equal(format('ip=%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%;'), 'ip=10.0.0.7;');
  assert.equal(format('%DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT% %DOWNSTREAM_LOCAL_PORT%'), '127.0.0.1:8080 127.0.0.1 8080');
  assert.equal(format('%PROTOCOL%/%HOSTNAME%'), 'HTTP/1.1/proxy-host');
  // Without use_remote_address, Envoy's remote address is the trusted x-forwarded-for one, port 0.
  assert.equal(format('%DOWNSTREAM_REMOTE_ADDRESS%', context(['x-forwarded-for', '192.0.2.1'], false)), '192.0.2.1:0');
});

test('what Envoy refuses, in its words; what this build cannot fill in, by name', () => {
  const refused = (text: string, reason: string) => assert.throws(() => parseHeaderFormat(text), (e: unknown) => e instanceof FieldError && e.reason === reason, text);
  refused('%', 'Invalid header configuration. Un-escaped % at position 0');
  refused('abc%', 'Invalid header configuration. Un-escaped % at position 3');
  refused('%VAR', "Invalid header configuration. Un-terminated variable expression 'VAR'");
  refused('%%%VAR', "Invalid header configuration. Un-terminated variable expression 'VAR'");
  refused('%INVALID%', "field 'INVALID' not supported as custom header");
  refused('%PROTOCOL(x)%', "field 'PROTOCOL(x)' not supported as custom header");
  refused('%VAR(["a" "b"])%', `Invalid header configuration. Expecting ',', ']', or whitespace after 'VAR(["a" ', but found '"'`);
  refused('%VAR([x])%', `Invalid header configuration. Expecting '"' or whitespace after 'VAR([', but found 'x'`);
  refused('%VAR(["a"] x)%', `Invalid header configuration. Expecting ')' or whitespace after 'VAR(["a"] ', but found 'x'`);
  refused('%VAR(["a"]) x%', `Invalid header configuration. Expecting '%' or whitespace after 'VAR(["a"]) ', but found 'x'`);
  refused('%UPSTREAM_METADATA(["ns", "key"])%', "field 'UPSTREAM_METADATA' is not supported as a custom header by this build yet");
  refused('%START_TIME(%s)%', "field 'START_TIME' is not supported as a custom header by this build yet");
});

test('a level removes first, then adds; append false replaces; an empty value adds nothing', () => {
  const mutator = new HeaderMutator({
    add: [
      { name: 'x-added', value: 'one', append: true },
      { name: 'x-added', value: 'two', append: true },
      { name: 'x-set', value: 'only', append: false },
      { name: 'x-gone', value: 'back', append: true },
      { name: 'x-empty', value: '', append: true },
    ],
    remove: ['x-gone', 'x-absent'],
  });
  const headers = ['x-set', 'a', 'x-gone', 'b', 'x-keep', 'c', 'x-set', 'd'];
  mutator.apply(headers, context());
  assert.deepEqual(headers, ['x-keep', 'c', 'x-added', 'one', 'x-added', 'two', 'x-set', 'only', 'x-gone', 'back']);
});
