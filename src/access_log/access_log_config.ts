// The model of an access log (config.accesslog.v3.AccessLog): its filter, which any logger may
// have, and its logger's own model (the file logger's). Plain data, built from the decoded
// configuration and sent to the workers as it is.

import type { AccessLogConfig, FractionalPercent, HeaderMatch } from '../config/model';
import type { LogFormat } from './log_formatter';

/** One access_log entry of the HTTP connection manager or the TCP proxy. */
export interface AccessLogEntryConfig {
  readonly filter: AccessLogFilterConfig | null;
  /** The logger's model, built by its descriptor (FileAccessLogConfig for proxy.access_loggers.file). */
  readonly logger: AccessLogConfig;
}

/** proxy.access_loggers.file's model (FileAccessLog). */
export interface FileAccessLogConfig extends AccessLogConfig {
  /** The file the entries go to; `/dev/stdout` works. */
  readonly path: string;
  readonly format: LogFormat;
}

/** config.accesslog.v3.ComparisonFilter: the runtime value at runtimeKey, if any, replaces defaultValue. */
export interface Comparison {
  readonly op: 'EQ' | 'GE' | 'LE';
  readonly defaultValue: number;
  readonly runtimeKey: string;
}

/** config.accesslog.v3.AccessLogFilter, the kinds this build evaluates. */
export type AccessLogFilterConfig =
  | { readonly kind: 'status_code' | 'duration'; readonly comparison: Comparison }
  | { readonly kind: 'not_health_check' | 'traceable' }
  | {
      readonly kind: 'runtime';
      readonly runtimeKey: string;
      readonly percentSampled: FractionalPercent;
      readonly useIndependentRandomness: boolean;
    }
  | { readonly kind: 'and' | 'or'; readonly filters: readonly AccessLogFilterConfig[] }
  | { readonly kind: 'header'; readonly header: HeaderMatch }
  /** ResponseFlag bits; 0 matches any flag. */
  | { readonly kind: 'response_flag'; readonly flags: number }
  /** gRPC status codes (-1 stands for a grpc-status Envoy could not read). */
  | { readonly kind: 'grpc_status'; readonly statuses: readonly number[]; readonly exclude: boolean };
