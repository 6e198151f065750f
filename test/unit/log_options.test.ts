import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseComponentLogLevels } from '../../src/log/component_levels';
import { COMPONENT_NAMES } from '../../src/log/components';
import {
  ComponentLogLevelSyntaxError,
  InvalidComponentError,
  InvalidLogLevelError,
  LogOptionError,
} from '../../src/log/errors';
import { parseLogLevel, parseLogLevelOption } from '../../src/log/level';

test('--component-log-level sets each named component', { timeout: 20000 }, () => {
  assert.deepEqual(
    [...parseComponentLogLevels('upstream:debug,connection:trace,proxy_bug:off')],
    [['upstream', 'debug'], ['connection', 'trace'], ['proxy_bug', 'off']],
  );
  assert.deepEqual([...parseComponentLogLevels('')], []);
  assert.deepEqual([...parseComponentLogLevels('http:info,http:error')], [['http', 'error']]);
});

test('--component-log-level errors carry Envoy\'s messages', { timeout: 20000 }, () => {
  const cases: ReadonlyArray<[string, new (...args: never[]) => LogOptionError, string]> = [
    ['upstream', ComponentLogLevelSyntaxError, "error: component log level not correctly specified 'upstream'"],
    ['upstream:debug:x', ComponentLogLevelSyntaxError, "error: component log level not correctly specified 'upstream:debug:x'"],
    ['upstream:debug,', ComponentLogLevelSyntaxError, "error: component log level not correctly specified ''"],
    ['upstream:loud', InvalidLogLevelError, "error: invalid log level specified 'loud'"],
    ['upstream:', InvalidLogLevelError, "error: invalid log level specified ''"],
    // The legacy `warn` alias belongs to -l only.
    ['upstream:warn', InvalidLogLevelError, "error: invalid log level specified 'warn'"],
    ['nosuch:debug', InvalidComponentError, "error: invalid component specified 'nosuch'"],
    ['envoy_bug:debug', InvalidComponentError, "error: invalid component specified 'envoy_bug'"],
    // The level is checked before the component, as Envoy does.
    ['nosuch:loud', InvalidLogLevelError, "error: invalid log level specified 'loud'"],
  ];
  for (const [text, type, message] of cases) {
    assert.throws(() => parseComponentLogLevels(text), (error: unknown) => {
      assert.ok(error instanceof type, text);
      assert.ok(error instanceof LogOptionError);
      assert.equal(error.message, message);
      return true;
    });
  }
});

test('-l accepts spdlog level names and the legacy warn', { timeout: 20000 }, () => {
  for (const level of ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off']) {
    assert.equal(parseLogLevelOption(level), level);
    assert.equal(parseLogLevel(level), level);
  }
  assert.equal(parseLogLevelOption('warn'), 'warning');
  assert.throws(() => parseLogLevel('warn'), InvalidLogLevelError);
  assert.throws(() => parseLogLevelOption('INFO'), { message: "error: invalid log level specified 'INFO'" });
});

test('component names follow Envoy 1.16 registry order, envoy renamed proxy', { timeout: 20000 }, () => {
  const envoy =
    'admin aws assert backtrace cache_filter client config connection conn_handler decompression dubbo ' +
    'envoy_bug ext_authz rocketmq file filter forward_proxy grpc hc health_checker http http2 hystrix ' +
    'init io jwt kafka lua main misc mongo quic quic_stream pool rbac redis router runtime stats secret ' +
    'tap testing thrift tracing upstream udp wasm';
  assert.deepEqual(COMPONENT_NAMES, envoy.replace('envoy_bug', 'proxy_bug').split(' '));
});
