#!/usr/bin/env node
// The management server of the xDS demo (`make xds-demo`, docs/xds.md "Watching it change"):
// one ADS service (state of the world, V3) serving LDS, CDS, EDS and RDS to a proxy started on
// configs/xds-demo.yaml, and two local HTTP upstreams, "a" and "b", that answer their name.
// Every interval it moves to the next phase of a four-phase cycle: the endpoints of cluster
// `blue` grow and shrink over the two upstreams, route `/` of route configuration
// `demo_routes` shifts its weights between `blue` and `green` (whose one endpoint is b), and
// listener `canary` joins listener `ingress` in phases 1 and 2.
// It logs each push and the proxy's ACK or NACK of it.
//
//   node scripts/xds-demo-server.js [--port 18000] [--interval-ms 5000] [--upstream-ports 0,0]
//                                   [--listener-ports 10000,10001]
//   (or XDS_DEMO_PORT, XDS_DEMO_INTERVAL_MS, XDS_DEMO_UPSTREAM_PORTS, XDS_DEMO_LISTENER_PORTS;
//   an upstream port 0 binds any free port, a listener port 0 lets the proxy pick one)
//
// It prints the ports it bound ("management server on 127.0.0.1:<port>", "upstream a on ...").
// It needs a built checkout (`make`): @grpc/grpc-js and protobufjs from node_modules, and the
// Envoy schema in dist/protos.json.

'use strict';

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protobuf = require('protobufjs/light');
const protojson = require('protobufjs/ext/protojson');

const ADS_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const REQUEST = 'envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';

// The types this server serves over ADS, and how a proxy subscribes to each: a wildcard type is
// sent all its resources, another only those its request names.
const TYPES = [
  { label: 'LDS', typeUrl: 'type.googleapis.com/envoy.config.listener.v3.Listener', wildcard: true },
  { label: 'CDS', typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster', wildcard: true },
  { label: 'EDS', typeUrl: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment', wildcard: false },
  { label: 'RDS', typeUrl: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration', wildcard: false },
];
const typeOf = (typeUrl) => TYPES.find((t) => t.typeUrl === typeUrl);
const [LDS, CDS, EDS, RDS] = TYPES;

// The cycle: blue's endpoints, the weights of blue and green on route `/`, and whether listener
// `canary` is served. The canary comes and goes rather than `ingress` changing, since a changed
// listener drains its connections, and the demo's HTTP/2 clients keep theirs across the cycle.
const PHASES = [
  { blue: ['a'], weights: { blue: 100, green: 0 }, canary: false },
  { blue: ['a', 'b'], weights: { blue: 50, green: 50 }, canary: true },
  { blue: ['b'], weights: { blue: 0, green: 100 }, canary: true },
  { blue: ['a', 'b'], weights: { blue: 50, green: 50 }, canary: false },
];

function options() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: process.env.XDS_DEMO_PORT ?? '18000' },
      'interval-ms': { type: 'string', default: process.env.XDS_DEMO_INTERVAL_MS ?? '5000' },
      'upstream-ports': { type: 'string', default: process.env.XDS_DEMO_UPSTREAM_PORTS ?? '0,0' },
      'listener-ports': { type: 'string', default: process.env.XDS_DEMO_LISTENER_PORTS ?? '10000,10001' },
    },
  });
  const number = (name, text) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name}: not a non-negative integer: ${text}`);
    return n;
  };
  const pair = (name, what) => {
    const ports = values[name].split(',').map((p) => number(name, p));
    if (ports.length !== 2) throw new Error(`--${name}: two ports, ${what}: ${values[name]}`);
    return ports;
  };
  const [ingress, canary] = pair('listener-ports', 'ingress and canary');
  return {
    port: number('port', values.port),
    intervalMs: number('interval-ms', values['interval-ms']),
    upstreamPorts: pair('upstream-ports', 'a and b'),
    listenerPorts: { ingress, canary },
  };
}

const log = (line) => console.log(`${new Date().toISOString().slice(11, 23)} ${line}`);

const socketAddress = (port) => ({ socket_address: { address: '127.0.0.1', port_value: port } });

function edsCluster(name) {
  return {
    '@type': CDS.typeUrl,
    name,
    type: 'EDS',
    connect_timeout: '1s',
    eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
  };
}

function assignment(name, upstreams, ports) {
  return {
    '@type': EDS.typeUrl,
    cluster_name: name,
    endpoints: [{ lb_endpoints: upstreams.map((u) => ({ endpoint: { address: socketAddress(ports[u]) } })) }],
  };
}

/** A listener on 127.0.0.1:`port` whose connection manager takes `demo_routes` by RDS over ADS. */
function listener(name, port) {
  return {
    '@type': LDS.typeUrl,
    name,
    address: socketAddress(port),
    filter_chains: [
      {
        filters: [
          {
            name: 'proxy.filters.network.http_connection_manager',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              stat_prefix: `${name}_http`,
              rds: { route_config_name: 'demo_routes', config_source: { ads: {}, resource_api_version: 'V3' } },
              http_filters: [{ name: 'proxy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
            },
          },
        ],
      },
    ],
  };
}

/** What the server serves in phase `index`, by type URL. */
function phaseResources(index, ports, listenerPorts) {
  const phase = PHASES[index];
  const weighted = Object.entries(phase.weights).map(([name, weight]) => ({ name, weight }));
  const listeners = [listener('ingress', listenerPorts.ingress)];
  if (phase.canary) listeners.push(listener('canary', listenerPorts.canary));
  return new Map([
    [LDS.typeUrl, listeners],
    [CDS.typeUrl, [edsCluster('blue'), edsCluster('green')]],
    [EDS.typeUrl, [assignment('blue', phase.blue, ports), assignment('green', ['b'], ports)]],
    [
      RDS.typeUrl,
      [
        {
          '@type': RDS.typeUrl,
          name: 'demo_routes',
          virtual_hosts: [
            {
              name: 'demo',
              domains: ['*'],
              routes: [
                {
                  match: { prefix: '/' },
                  route: { weighted_clusters: { clusters: weighted, total_weight: 100 } },
                  response_headers_to_add: [{ header: { key: 'x-demo-phase', value: String(index) } }],
                },
              ],
            },
          ],
        },
      ],
    ],
  ]);
}

/** A resource's name, as a subscription names it. */
const nameOf = (resource) => resource.name ?? resource.cluster_name;

/** One line for the log: what a push of `resources` holds; `upstreamOf` names an endpoint's port. */
function describe(type, resources, upstreamOf) {
  if (type === EDS) return resources.map((r) => `${r.cluster_name}=[${r.endpoints[0].lb_endpoints.map((e) => upstreamOf(e.endpoint.address.socket_address.port_value)).join(' ')}]`).join(' ');
  if (type === LDS) return resources.map((r) => `${r.name} on 127.0.0.1:${r.address.socket_address.port_value}`).join(', ');
  if (type === RDS) return resources.map((r) => `${r.name}: / -> ${r.virtual_hosts[0].routes[0].route.weighted_clusters.clusters.map((c) => `${c.name} ${c.weight}%`).join(', ')}`).join('; ');
  return resources.map(nameOf).join(' ');
}

/** The versioned resources of every type: a type's version moves only when its content does. */
class Snapshots {
  constructor() {
    this.byType = new Map();
  }

  /** Sets each type's resources; returns the types whose content changed. */
  update(resourcesByType) {
    const changed = [];
    for (const [typeUrl, resources] of resourcesByType) {
      const previous = this.byType.get(typeUrl);
      const content = JSON.stringify(resources);
      if (previous?.content === content) continue;
      this.byType.set(typeUrl, { version: String(Number(previous?.version ?? 0) + 1), resources, content });
      changed.push(typeUrl);
    }
    return changed;
  }

  get(typeUrl) {
    return this.byType.get(typeUrl);
  }
}

class AdsServer {
  constructor(root, snapshots, upstreamOf) {
    this.root = root;
    this.snapshots = snapshots;
    this.upstreamOf = upstreamOf;
    this.requestType = root.lookupType(REQUEST);
    this.responseType = root.lookupType(RESPONSE);
    this.streams = new Set();
    this.streamCount = 0;
    this.nonce = 0;
  }

  /** Serves one ADS stream: each type's current version once asked for, then each change. */
  serve(call) {
    // By type URL: the names last asked for, and the version and nonce last sent.
    const stream = { id: ++this.streamCount, call, types: new Map() };
    this.streams.add(stream);
    log(`stream ${stream.id} opened`);
    call.on('data', (bytes) => {
      let request;
      try {
        request = this.requestType.toObject(this.requestType.decode(bytes), { defaults: true, arrays: true });
      } catch (e) {
        log(`stream ${stream.id}: an undecodable request ignored: ${e.message}`);
        return;
      }
      this.onRequest(stream, request);
    });
    const gone = () => {
      if (this.streams.delete(stream)) log(`stream ${stream.id} closed`);
    };
    call.on('end', () => {
      gone();
      call.end();
    });
    call.on('error', gone);
    call.on('cancelled', gone);
  }

  onRequest(stream, request) {
    const type = typeOf(request.type_url);
    if (type === undefined) {
      log(`stream ${stream.id}: a request for ${request.type_url}, which this server does not serve`);
      return;
    }
    const state = stream.types.get(type.typeUrl) ?? { names: [], version: undefined, nonce: undefined };
    stream.types.set(type.typeUrl, state);
    if (request.response_nonce !== '') {
      // The answer to an older response than the last one sent is out of date: the proxy will
      // answer the last one too.
      if (request.response_nonce !== state.nonce) return;
      if (request.error_detail) log(`stream ${stream.id}: <- NACK ${type.label} version ${state.version}: ${request.error_detail.message}`);
      else log(`stream ${stream.id}: <- ACK  ${type.label} version ${request.version_info}`);
    } else {
      log(`stream ${stream.id}: <- ${type.label} subscribe ${type.wildcard ? '(all)' : request.resource_names.join(' ')}`);
    }
    const namesChanged = request.resource_names.join('\0') !== state.names.join('\0');
    state.names = request.resource_names;
    if (namesChanged || state.version !== this.snapshots.get(type.typeUrl)?.version) this.send(stream, type);
  }

  /** Sends every stream that asked for each of `typeUrls` its current version. */
  push(typeUrls) {
    for (const stream of this.streams) {
      for (const typeUrl of typeUrls) {
        if (stream.types.has(typeUrl)) this.send(stream, typeOf(typeUrl));
      }
    }
  }

  send(stream, type) {
    const snapshot = this.snapshots.get(type.typeUrl);
    const state = stream.types.get(type.typeUrl);
    if (snapshot === undefined) return;
    const resources = type.wildcard ? snapshot.resources : snapshot.resources.filter((r) => state.names.includes(nameOf(r)));
    state.version = snapshot.version;
    state.nonce = String(++this.nonce);
    const response = {
      version_info: snapshot.version,
      type_url: type.typeUrl,
      nonce: state.nonce,
      resources: resources.map((resource) => this.encodeAny(resource)),
    };
    stream.call.write(Buffer.from(this.responseType.encode(this.responseType.fromObject(response)).finish()));
    log(`stream ${stream.id}: -> ${type.label} version ${snapshot.version}: ${describe(type, resources, this.upstreamOf)}`);
  }

  encodeAny(resource) {
    const { '@type': typeUrl, ...fields } = resource;
    const type = this.root.lookupType(typeUrl.slice(typeUrl.lastIndexOf('/') + 1));
    return { type_url: typeUrl, value: type.encode(protojson.fromJson(type, fields)).finish() };
  }
}

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server.address().port));
  });
}

async function main() {
  const { port, intervalMs, upstreamPorts, listenerPorts } = options();
  const schemaPath = path.join(__dirname, '..', 'dist', 'protos.json');
  if (!fs.existsSync(schemaPath)) throw new Error(`${schemaPath} is missing: run \`make\` first`);
  const root = protobuf.Root.fromJSON(JSON.parse(fs.readFileSync(schemaPath, 'utf8')));
  root.resolveAll();

  const upstreams = ['a', 'b'].map((name) => http.createServer((req, res) => res.end(`upstream ${name}\n`)));
  const ports = {};
  for (const [i, name] of ['a', 'b'].entries()) {
    ports[name] = await listen(upstreams[i], upstreamPorts[i]);
    console.log(`xds-demo-server: upstream ${name} on 127.0.0.1:${ports[name]}`);
  }

  const snapshots = new Snapshots();
  let phase = 0;
  snapshots.update(phaseResources(phase, ports, listenerPorts));
  const ads = new AdsServer(root, snapshots, (p) => Object.keys(ports).find((name) => ports[name] === p) ?? p);
  const server = new grpc.Server();
  const identity = (bytes) => bytes;
  server.addService(
    { StreamAggregatedResources: { path: ADS_PATH, requestStream: true, responseStream: true, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity } },
    { StreamAggregatedResources: (call) => ads.serve(call) },
  );
  const bound = await new Promise((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
  );
  console.log(`xds-demo-server: management server on 127.0.0.1:${bound} (ADS, V3), next phase every ${intervalMs} ms`);

  const timer = setInterval(() => {
    phase = (phase + 1) % PHASES.length;
    const changed = snapshots.update(phaseResources(phase, ports, listenerPorts));
    log(`phase ${phase}: ${changed.map((url) => typeOf(url).label).join(', ') || 'nothing'} changed`);
    ads.push(changed);
  }, intervalMs);

  const stop = () => {
    clearInterval(timer);
    server.forceShutdown();
    for (const upstream of upstreams) {
      upstream.closeAllConnections();
      upstream.close();
    }
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((e) => {
  console.error(`xds-demo-server: ${e.message}`);
  process.exit(1);
});
