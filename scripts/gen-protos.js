#!/usr/bin/env node
'use strict';
// Build step: writes dist/protos.json, a compact protobufjs descriptor of the Envoy v3 types the
// configuration pipeline decodes. Parsing the hundreds of .proto files behind them at every start
// would cost more than the whole validate-mode budget; loading this JSON costs a few milliseconds.
//
// The .proto files come from the dev dependency @grpc/grpc-js-xds, the one npm package that
// ships Envoy's API with its imports (googleapis, protoc-gen-validate, xds). Its snapshot is newer
// than Envoy 1.16; v3 only adds fields, and the capability check refuses the ones we do not run.
// The one import it lacks, Prometheus's data model (the MetricsService's messages), is in
// scripts/protos, with the proxy's own admin security message (ADMIN_SECURITY below).
// Nothing of it is needed at run time: a production install (npm ci --omit=dev) leaves it out.
//
// Next to it, dist/proto_annotations.json carries the two annotations the loader reads from the
// same .proto files: each v3 message's previous (v2) name, which lets a v2 type URL resolve to
// its v3 type, and the protoc-gen-validate rules (`validate.rules`, `validate.required` on a
// oneof), which the loader enforces on the decoded bootstrap.
//
// Usage: node scripts/gen-protos.js [output]   (default: dist/protos.json; the annotations are
// written beside it)

const fs = require('node:fs');
const path = require('node:path');
const protobuf = require('protobufjs');

const PROJECT = path.resolve(__dirname, '..');
const DEPS = path.join(PROJECT, 'node_modules/@grpc/grpc-js-xds/deps');
// Envoy's protos import google/protobuf/descriptor.proto, which protobufjs ships itself.
const INCLUDE_DIRS = [
  path.join(DEPS, 'envoy-api'),
  path.join(DEPS, 'googleapis'),
  path.join(DEPS, 'protoc-gen-validate'),
  path.join(DEPS, 'xds'),
  path.join(__dirname, 'protos'),
  path.dirname(require.resolve('protobufjs/package.json')),
];

// The entry points: the bootstrap, and every message that can appear inside one as an Any
// (typed_config), which the field graph alone cannot reach.
const ENTRY_POINTS = [
  { file: 'envoy/config/bootstrap/v3/bootstrap.proto', types: ['envoy.config.bootstrap.v3.Bootstrap'] },
  { file: 'envoy/config/cluster/v3/cluster.proto', types: ['envoy.config.cluster.v3.Cluster'] },
  {
    file: 'envoy/config/endpoint/v3/endpoint.proto',
    types: ['envoy.config.endpoint.v3.ClusterLoadAssignment'],
  },
  {
    file: 'envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto',
    types: ['envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy'],
  },
  {
    file: 'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
    types: ['envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager'],
  },
  {
    file: 'envoy/extensions/filters/http/health_check/v3/health_check.proto',
    types: ['envoy.extensions.filters.http.health_check.v3.HealthCheck'],
  },
  {
    file: 'envoy/extensions/filters/http/cors/v3/cors.proto',
    types: ['envoy.extensions.filters.http.cors.v3.Cors'],
  },
  {
    file: 'envoy/extensions/filters/http/fault/v3/fault.proto',
    types: ['envoy.extensions.filters.http.fault.v3.HTTPFault'],
  },
  {
    file: 'envoy/extensions/filters/http/csrf/v3/csrf.proto',
    types: ['envoy.extensions.filters.http.csrf.v3.CsrfPolicy'],
  },
  {
    file: 'envoy/extensions/filters/http/local_ratelimit/v3/local_rate_limit.proto',
    types: ['envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit'],
  },
  {
    file: 'envoy/extensions/filters/http/compressor/v3/compressor.proto',
    types: ['envoy.extensions.filters.http.compressor.v3.Compressor'],
  },
  {
    file: 'envoy/extensions/compression/gzip/compressor/v3/gzip.proto',
    types: ['envoy.extensions.compression.gzip.compressor.v3.Gzip'],
  },
  {
    file: 'envoy/extensions/filters/http/gzip/v3/gzip.proto',
    types: ['envoy.extensions.filters.http.gzip.v3.Gzip'],
  },
  {
    file: 'envoy/extensions/filters/http/buffer/v3/buffer.proto',
    types: ['envoy.extensions.filters.http.buffer.v3.Buffer', 'envoy.extensions.filters.http.buffer.v3.BufferPerRoute'],
  },
  {
    file: 'envoy/extensions/filters/http/grpc_web/v3/grpc_web.proto',
    types: ['envoy.extensions.filters.http.grpc_web.v3.GrpcWeb'],
  },
  {
    file: 'envoy/extensions/filters/http/grpc_http1_bridge/v3/config.proto',
    types: ['envoy.extensions.filters.http.grpc_http1_bridge.v3.Config'],
  },
  {
    file: 'envoy/extensions/filters/http/ratelimit/v3/rate_limit.proto',
    types: ['envoy.extensions.filters.http.ratelimit.v3.RateLimit', 'envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute'],
  },
  // What the rate limit filter asks its service and is answered (v2's messages share their
  // field numbers: the filter sends these on either method).
  {
    file: 'envoy/service/ratelimit/v3/rls.proto',
    types: ['envoy.service.ratelimit.v3.RateLimitRequest', 'envoy.service.ratelimit.v3.RateLimitResponse'],
  },
  {
    file: 'envoy/extensions/filters/http/ext_authz/v3/ext_authz.proto',
    types: ['envoy.extensions.filters.http.ext_authz.v3.ExtAuthz', 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute'],
  },
  // What ext_authz's gRPC service is sent and answers (v2's messages are the same on the wire).
  {
    file: 'envoy/service/auth/v3/external_auth.proto',
    types: ['envoy.service.auth.v3.CheckRequest', 'envoy.service.auth.v3.CheckResponse'],
  },
  {
    file: 'envoy/extensions/filters/http/router/v3/router.proto',
    types: ['envoy.extensions.filters.http.router.v3.Router'],
  },
  {
    file: 'envoy/extensions/transport_sockets/proxy_protocol/v3/upstream_proxy_protocol.proto',
    types: ['envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport'],
  },
  // The overload manager's resource monitors (Bootstrap.overload_manager.resource_monitors).
  {
    file: 'envoy/extensions/resource_monitors/fixed_heap/v3/fixed_heap.proto',
    types: ['envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig'],
  },
  {
    file: 'envoy/extensions/resource_monitors/injected_resource/v3/injected_resource.proto',
    types: ['envoy.extensions.resource_monitors.injected_resource.v3.InjectedResourceConfig'],
  },
  {
    file: 'envoy/extensions/retry/host/previous_hosts/v3/previous_hosts.proto',
    types: ['envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate'],
  },
  {
    file: 'envoy/extensions/internal_redirect/allow_listed_routes/v3/allow_listed_routes_config.proto',
    types: ['envoy.extensions.internal_redirect.allow_listed_routes.v3.AllowListedRoutesConfig'],
  },
  {
    file: 'envoy/extensions/internal_redirect/previous_routes/v3/previous_routes_config.proto',
    types: ['envoy.extensions.internal_redirect.previous_routes.v3.PreviousRoutesConfig'],
  },
  {
    file: 'envoy/extensions/internal_redirect/safe_cross_scheme/v3/safe_cross_scheme_config.proto',
    types: ['envoy.extensions.internal_redirect.safe_cross_scheme.v3.SafeCrossSchemeConfig'],
  },
  {
    file: 'envoy/extensions/access_loggers/file/v3/file.proto',
    types: ['envoy.extensions.access_loggers.file.v3.FileAccessLog'],
  },
  {
    file: 'envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto',
    types: ['envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer'],
  },
  {
    file: 'envoy/extensions/transport_sockets/tls/v3/tls.proto',
    types: [
      'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
      'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
    ],
  },
  {
    file: 'envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto',
    types: ['envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector'],
  },
  {
    file: 'envoy/extensions/clusters/aggregate/v3/cluster.proto',
    types: ['envoy.extensions.clusters.aggregate.v3.ClusterConfig'],
  },
  {
    file: 'envoy/extensions/filters/listener/original_dst/v3/original_dst.proto',
    types: ['envoy.extensions.filters.listener.original_dst.v3.OriginalDst'],
  },
  {
    file: 'envoy/config/metrics/v3/stats.proto',
    types: ['envoy.config.metrics.v3.StatsdSink', 'envoy.config.metrics.v3.DogStatsdSink'],
  },
  {
    file: 'envoy/config/metrics/v3/metrics_service.proto',
    types: ['envoy.config.metrics.v3.MetricsServiceConfig'],
  },
  // What the metrics_service stats sink streams to its server.
  {
    file: 'envoy/service/metrics/v3/metrics_service.proto',
    types: ['envoy.service.metrics.v3.StreamMetricsMessage', 'envoy.service.metrics.v3.StreamMetricsResponse'],
  },
  {
    file: 'envoy/config/trace/v3/zipkin.proto',
    types: ['envoy.config.trace.v3.ZipkinConfig'],
  },
  // xDS: what a management server (or a file-based config source) sends and is sent.
  {
    file: 'envoy/service/discovery/v3/discovery.proto',
    types: [
      'envoy.service.discovery.v3.DiscoveryRequest',
      'envoy.service.discovery.v3.DiscoveryResponse',
      'envoy.service.discovery.v3.DeltaDiscoveryRequest',
      'envoy.service.discovery.v3.DeltaDiscoveryResponse',
    ],
  },
  // RTDS's resource: a runtime layer.
  {
    file: 'envoy/service/runtime/v3/rtds.proto',
    types: ['envoy.service.runtime.v3.Runtime'],
  },
  // The protocol options types that extension_protocol_options (a v2 Struct) upgrades to.
  {
    file: 'envoy/extensions/filters/network/thrift_proxy/v3/thrift_proxy.proto',
    types: ['envoy.extensions.filters.network.thrift_proxy.v3.ThriftProtocolOptions'],
  },
  {
    file: 'envoy/extensions/filters/network/redis_proxy/v3/redis_proxy.proto',
    types: ['envoy.extensions.filters.network.redis_proxy.v3.RedisProtocolOptions'],
  },
];

// The proxy's own admin security settings (a proxy extension, docs/admin.md): the message is in
// scripts/protos, the field that carries it is added to Envoy's Admin here. Its number is far
// above Envoy's, so that a binary (.pb) bootstrap can carry it too.
const ADMIN_SECURITY = {
  file: 'proxyext/admin/v3/admin_security.proto',
  carrier: 'envoy.config.bootstrap.v3.Admin',
  field: 'security',
  number: 1000,
  type: 'proxyext.admin.v3.AdminSecurity',
};

function loadRoot() {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const dir of INCLUDE_DIRS) {
      const candidate = path.join(dir, target);
      if (fs.existsSync(candidate)) return candidate;
    }
    throw new Error(`gen-protos: cannot find ${target} in ${INCLUDE_DIRS.join(', ')}`);
  };
  // keepCase: field names stay snake_case, the spelling of Envoy's YAML and of /config_dump.
  root.loadSync([...ENTRY_POINTS.map((entry) => entry.file), ADMIN_SECURITY.file], { keepCase: true });
  // Envoy's Admin has no place for an extension: this build's copy carries ours as a field.
  const carrier = new protobuf.Field(ADMIN_SECURITY.field, ADMIN_SECURITY.number, ADMIN_SECURITY.type);
  root.lookupType(ADMIN_SECURITY.carrier).add(carrier);
  root.resolveAll();
  // resolveAll skips a type it has resolved already (Admin, loading its file).
  carrier.resolve();
  return root;
}

/**
 * Writes each message or enum field's type as its full name (`.envoy.config.core.v3.Address`):
 * the run time's schema load then finds it from the root at once, where protobufjs looks for a
 * relative name (`core.v3.Address`) in every namespace around the field and under each of them,
 * which was half of that load.
 */
function qualifyFieldTypes(namespace) {
  for (const nested of namespace.nestedArray) {
    if (nested instanceof protobuf.Type) {
      for (const field of nested.fieldsArray) if (field.resolvedType) field.type = field.resolvedType.fullName;
    }
    if (nested instanceof protobuf.Namespace) qualifyFieldTypes(nested);
  }
}

/** Full names (without the leading dot) of every type and enum reachable from the entry points. */
function reachableNames(root) {
  const kept = new Set();
  const visit = (reflected) => {
    const name = reflected.fullName.slice(1);
    if (kept.has(name)) return;
    kept.add(name);
    // A nested type is written inside its parent's descriptor, so the parent must stay too.
    if (reflected.parent instanceof protobuf.Type) visit(reflected.parent);
    if (reflected instanceof protobuf.Type) {
      for (const field of reflected.fieldsArray) {
        if (field.resolvedType) visit(field.resolvedType);
      }
    }
  };
  for (const entry of ENTRY_POINTS) {
    for (const type of entry.types) visit(root.lookupTypeOrEnum(type));
  }
  return kept;
}

// Options (validation rules, migration annotations, language options) are never read at run
// time, but for the sensitive mark (withoutOptions). Reserved names go too: the text-format
// parser silently skips a reserved name, and those are the v2 fields (`hosts`, `tls_context`)
// that must be reported rather than dropped. `nested` is rebuilt from the kept children.
const DROPPED_KEYS = new Set(['options', 'valuesOptions', 'reserved', 'nested']);

/** Copies a descriptor, keeping only the kept types and enums and the namespaces that hold them. */
function prune(descriptor, prefix, kept) {
  const out = {};
  for (const [key, value] of Object.entries(descriptor)) {
    if (DROPPED_KEYS.has(key)) continue;
    out[key] = key === 'fields' || key === 'oneofs' ? withoutOptions(value) : value;
  }
  if (descriptor.nested) {
    const nested = {};
    for (const [name, child] of Object.entries(descriptor.nested)) {
      const fullName = prefix ? `${prefix}.${name}` : name;
      const isDefinition = child.fields !== undefined || child.values !== undefined;
      if (isDefinition && !kept.has(fullName)) continue;
      const pruned = prune(child, fullName, kept);
      if (isDefinition || pruned.nested) nested[name] = pruned;
    }
    if (Object.keys(nested).length > 0) out.nested = nested;
  }
  return out;
}

// The one option read at run time: /config_dump redacts the fields marked sensitive.
const SENSITIVE = '(udpa.annotations.sensitive)';

function withoutOptions(members) {
  const out = {};
  for (const [name, member] of Object.entries(members)) {
    const { options, ...rest } = member;
    out[name] = options && options[SENSITIVE] === true ? { ...rest, options: { [SENSITIVE]: true } } : rest;
  }
  return out;
}

const VERSIONING = '(udpa.annotations.versioning)';
const RULES = '(validate.rules)';
const ONEOF_REQUIRED = '(validate.required)';
const MESSAGE_DISABLED = ['(validate.disabled)', '(validate.ignored)'];

// Where the product's specification words a rule otherwise than Envoy's .proto, the spec's rule
// replaces the proto's: by message full name, then field name.
const SPEC_RULES = {
  // Envoy's proto says greater than 1ms; the spec's Cluster table says "At least 1ms".
  'envoy.config.cluster.v3.Cluster': { dns_refresh_rate: { duration: { gte: { nanos: 1000000 } } } },
  // Envoy 1.16's Compressor leaves compressor_library optional: the gzip filter's `compressor`
  // ignores it, and the compressor filter's factory asks for it (compressor.ts).
  'envoy.extensions.filters.http.compressor.v3.Compressor': { compressor_library: {} },
};

/**
 * One option's value, from protobufjs's parsedOptions (a list of partial values, one per
 * `[(opt).a = 1, (opt).b = 2]` clause), merged. The flat `options` form is no use: it drops
 * empty messages, and `gt: {}` (greater than zero) is exactly one of those.
 */
function parsedOption(reflected, name) {
  let merged;
  for (const clause of reflected.parsedOptions ?? []) {
    if (Object.hasOwn(clause, name)) merged = deepMerge(merged, clause[name]);
  }
  return merged;
}

function deepMerge(into, value) {
  const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(into) || !isObject(value)) return value;
  const out = { ...into };
  for (const [key, child] of Object.entries(value)) out[key] = deepMerge(out[key], child);
  return out;
}

/**
 * previousMessageTypes: v2 full name -> v3 full name, for every kept message (nested ones too).
 * rules: by message full name, the PGV rules of its fields, its required oneofs, and whether
 * validation is disabled for it. Only messages with at least one of those are listed.
 */
function annotations(root, kept) {
  const previousMessageTypes = {};
  const rules = {};
  for (const name of [...kept].sort()) {
    const type = root.lookup(name);
    if (!(type instanceof protobuf.Type)) continue;
    const previous = parsedOption(type, VERSIONING)?.previous_message_type;
    if (typeof previous === 'string') previousMessageTypes[previous] = name;
    const entry = {};
    if (MESSAGE_DISABLED.some((option) => parsedOption(type, option) === true)) entry.disabled = true;
    const fields = {};
    for (const field of type.fieldsArray) {
      const fieldRules = SPEC_RULES[name]?.[field.name] ?? parsedOption(field, RULES);
      if (fieldRules !== undefined) fields[field.name] = fieldRules;
    }
    if (Object.keys(fields).length > 0) entry.fields = fields;
    const requiredOneofs = type.oneofsArray.filter((oneof) => parsedOption(oneof, ONEOF_REQUIRED) === true).map((o) => o.name);
    if (requiredOneofs.length > 0) entry.requiredOneofs = requiredOneofs;
    if (Object.keys(entry).length > 0) rules[name] = entry;
  }
  return { previousMessageTypes, rules };
}

function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value));
  return fs.statSync(file).size;
}

function main() {
  const output = path.resolve(process.argv[2] || path.join(PROJECT, 'dist/protos.json'));
  const annotationsOutput = path.join(path.dirname(output), 'proto_annotations.json');
  const root = loadRoot();
  const kept = reachableNames(root);
  qualifyFieldTypes(root);
  const bytes = writeJson(output, prune(root.toJSON(), '', kept));
  const extracted = annotations(root, kept);
  const annotationBytes = writeJson(annotationsOutput, extracted);
  const where = (file) => path.relative(process.cwd(), file);
  process.stdout.write(`gen-protos: ${kept.size} types and enums, ${bytes} bytes -> ${where(output)}\n`);
  process.stdout.write(
    `gen-protos: ${Object.keys(extracted.previousMessageTypes).length} previous type names, ` +
      `rules of ${Object.keys(extracted.rules).length} messages, ${annotationBytes} bytes -> ${where(annotationsOutput)}\n`,
  );
}

main();
