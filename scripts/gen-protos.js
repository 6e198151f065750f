#!/usr/bin/env node
'use strict';
// Build step: writes dist/protos.json, a compact protobufjs descriptor of the Envoy v3 types the
// configuration pipeline decodes. Parsing the hundreds of .proto files behind them at every start
// would cost more than the whole validate-mode budget; loading this JSON costs a few milliseconds.
//
// The .proto files come from the dev dependency @grpc/grpc-js-xds, the one npm package that
// ships Envoy's API with its imports (googleapis, protoc-gen-validate, xds). Its snapshot is newer
// than Envoy 1.16; v3 only adds fields, and the capability check refuses the ones we do not run.
// Nothing of it is needed at run time: a production install (npm ci --omit=dev) leaves it out.
//
// Usage: node scripts/gen-protos.js [output]   (default: dist/protos.json)

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
    file: 'envoy/extensions/filters/http/router/v3/router.proto',
    types: ['envoy.extensions.filters.http.router.v3.Router'],
  },
  {
    file: 'envoy/config/core/v3/proxy_protocol.proto',
    types: ['envoy.config.core.v3.ProxyProtocolConfig'],
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
];

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
  root.loadSync(ENTRY_POINTS.map((entry) => entry.file), { keepCase: true });
  root.resolveAll();
  return root;
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

function main() {
  const output = path.resolve(process.argv[2] || path.join(PROJECT, 'dist/protos.json'));
  const root = loadRoot();
  const kept = reachableNames(root);
  const descriptor = prune(root.toJSON(), '', kept);
  fs.mkdirSync(path.dirname(output), { recursive: true });
  fs.writeFileSync(output, JSON.stringify(descriptor));
  const bytes = fs.statSync(output).size;
  process.stdout.write(`gen-protos: ${kept.size} types and enums, ${bytes} bytes -> ${path.relative(process.cwd(), output)}\n`);
}

main();
