/**
 * Component logger names in Envoy 1.16's registry order (`ALL_LOGGER_IDS`), which is also the
 * order GET /logging lists them in. `envoy_bug` is `proxy_bug` here.
 */
export const COMPONENT_NAMES = [
  'admin', 'aws', 'assert', 'backtrace', 'cache_filter', 'client', 'config', 'connection',
  'conn_handler', 'decompression', 'dubbo', 'proxy_bug', 'ext_authz', 'rocketmq', 'file',
  'filter', 'forward_proxy', 'grpc', 'hc', 'health_checker', 'http', 'http2', 'hystrix', 'init',
  'io', 'jwt', 'kafka', 'lua', 'main', 'misc', 'mongo', 'quic', 'quic_stream', 'pool', 'rbac',
  'redis', 'router', 'runtime', 'stats', 'secret', 'tap', 'testing', 'thrift', 'tracing',
  'upstream', 'udp', 'wasm',
] as const;

export type ComponentName = (typeof COMPONENT_NAMES)[number];

export function isComponentName(text: string): text is ComponentName {
  return (COMPONENT_NAMES as readonly string[]).includes(text);
}
