// GET /server_info?format=json: Envoy's envoy.admin.v3.ServerInfo, pretty printed with every
// primitive field shown (always_print_primitive_fields), keys in Envoy's order. Pure.

import type { ConfigExtensions } from '../config/extension';
import type { NodeInfo } from '../config/model';
import { nodeLocality } from '../config/node_overrides';
import type { Options } from '../cli/options';
import type { BuildInfo } from '../server/build_info';
import { versionString } from '../server/build_info';
import { buildNodeFields } from '../server/build_node_fields';
import type { ServerState } from '../server/server_state';

export interface ServerInfoSnapshot {
  readonly build: BuildInfo;
  readonly state: ServerState;
  readonly uptimeCurrentEpochS: number;
  readonly uptimeAllEpochsS: number;
  /** The compatibility string, or `disabled`. */
  readonly hotRestartVersion: string;
  readonly options: Options;
  /** The node after --service-cluster/--service-node/--service-zone. */
  readonly node: NodeInfo;
  /** The server's local address (not in Envoy's ServerInfo, which keeps it private). */
  readonly localAddress: string;
  /** The extensions the node lists. */
  readonly extensions: ConfigExtensions;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function renderServerInfoJson(s: ServerInfoSnapshot): string {
  const info: Json = {
    version: versionString(s.build),
    state: s.state,
    uptime_current_epoch: protoDuration(s.uptimeCurrentEpochS * 1000),
    uptime_all_epochs: protoDuration(s.uptimeAllEpochsS * 1000),
    hot_restart_version: s.hotRestartVersion,
    command_line_options: commandLineOptions(s.options),
    node: node(s),
    local_address: s.localAddress,
  };
  return `${JSON.stringify(info, null, 1)}\n`;
}

/** envoy.admin.v3.CommandLineOptions, in declaration order. */
export function commandLineOptions(o: Options): Json {
  return {
    // uint64: a string in proto JSON.
    base_id: String(o.baseId),
    use_dynamic_base_id: o.useDynamicBaseId,
    base_id_path: o.baseIdPath,
    concurrency: o.concurrency,
    config_path: o.configPath,
    config_yaml: o.configYaml,
    allow_unknown_static_fields: o.allowUnknownStaticFields,
    reject_unknown_dynamic_fields: o.rejectUnknownDynamicFields,
    ignore_unknown_dynamic_fields: o.ignoreUnknownDynamicFields,
    admin_address_path: o.adminAddressPath,
    local_address_ip_version: o.localAddressIpVersion,
    log_level: o.logLevel,
    component_log_level: o.componentLogLevel,
    log_format: o.logFormat,
    log_format_escaped: o.logFormatEscaped,
    log_path: o.logPath,
    service_cluster: o.serviceCluster,
    service_node: o.serviceNode,
    service_zone: o.serviceZone,
    file_flush_interval: protoDuration(o.fileFlushIntervalMsec),
    drain_time: protoDuration(o.drainTimeS * 1000),
    drain_strategy: o.drainStrategy === 'gradual' ? 'Gradual' : 'Immediate',
    parent_shutdown_time: protoDuration(o.parentShutdownTimeS * 1000),
    mode: MODE_NAMES[o.mode],
    disable_hot_restart: o.disableHotRestart,
    enable_mutex_tracing: o.enableMutexTracing,
    restart_epoch: o.restartEpoch,
    cpuset_threads: o.cpusetThreads,
    disabled_extensions: [...o.disabledExtensions],
    bootstrap_version: o.bootstrapVersion ?? 0,
    enable_fine_grain_logging: o.enableFineGrainLogging,
    socket_path: o.socketPath,
    socket_mode: o.socketMode,
  };
}

const MODE_NAMES: Readonly<Record<Options['mode'], string>> = { serve: 'Serve', validate: 'Validate', init_only: 'InitOnly' };

/** envoy.config.core.v3.Node as the server fills it in (LocalInfo), `envoy` names renamed. */
function node(s: ServerInfoSnapshot): Json {
  const { node: n, build } = s;
  const locality = nodeLocality(n);
  return {
    id: n.id,
    cluster: n.cluster,
    // An unset message is not printed, even with always_print_primitive_fields.
    ...(locality !== null ? { locality: { region: locality.region, zone: locality.zone, sub_zone: locality.subZone } } : {}),
    ...buildNodeFields(build, s.extensions, s.options.disabledExtensions),
    hidden_proxy_deprecated_build_version: versionString(build),
    client_features: [],
    listening_addresses: [],
  };
}

/** google.protobuf.Duration in proto JSON: `10s`, `1.500s` (0, 3, 6 or 9 fraction digits). */
export function protoDuration(ms: number): string {
  const whole = Math.floor(ms / 1000);
  const fraction = ms - whole * 1000;
  if (fraction === 0) return `${whole}s`;
  const nanos = Math.round(fraction * 1e6);
  const digits = nanos % 1e6 === 0 ? 3 : nanos % 1e3 === 0 ? 6 : 9;
  return `${whole}.${String(nanos).padStart(9, '0').slice(0, digits)}s`;
}
