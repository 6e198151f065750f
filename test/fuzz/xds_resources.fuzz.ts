// xDS: DiscoveryResponses of clusters, listeners and route configurations (the fixtures' own,
// as a management server would send them) in binary, as the gRPC transports get them, and in
// JSON, as REST and path subscriptions do; mutated in their bytes or trees. Each is decoded
// (DiscoveryWire, then the ResourceDecoder) and every resource applied the way CDS, LDS and RDS
// apply it (loadClusterResource, loadListenerResource, the supervisor's routeConfigLoader): a
// response is taken or refused with a FieldError at a path, and nothing else is thrown.

import * as protojson from 'protobufjs/ext/protojson';
import { loadClusterResource } from '../../src/config/cluster_resource';
import { atField, FieldError } from '../../src/config/errors';
import type { JsonObject, JsonValue } from '../../src/config/json';
import { loadListenerResource } from '../../src/config/listener_resource';
import { loadBootstrap } from '../../src/config/load';
import { protoSchema } from '../../src/config/schema';
import { DiscoveryWire } from '../../src/config/xds/discovery_wire';
import { ResourceDecoder } from '../../src/config/xds/resource_decoder';
import { CLUSTER_RESOURCE, LISTENER_RESOURCE, ROUTE_CONFIGURATION_RESOURCE, type ResourceType } from '../../src/config/xds/resource_types';
import { bootstrapValidationContext } from '../../src/config/validation/bootstrap';
import { routeConfigLoader } from '../../src/rds/route_config_loader';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { createHeapStatsStore } from '../../src/stats/store';
import { v3Bootstrap } from '../helpers/config_fixtures';
import { silentLogger } from '../helpers/data_plane';
import { encodeAny } from '../helpers/xds_any';
import type { FuzzInput, FuzzSurface } from './driver';
import { below, type Json, mutateBytes, mutateJson, pick, type Random } from './mutators';

const TYPES: Readonly<Record<string, ResourceType>> = { cds: CLUSTER_RESOURCE, lds: LISTENER_RESOURCE, rds: ROUTE_CONFIGURATION_RESOURCE };

/** A route configuration using what RDS resources commonly hold, for RDS's seed. */
const ROUTE_CONFIG: JsonObject = {
  name: 'rds_routes',
  request_headers_to_add: [{ header: { key: 'x-from', value: '%DOWNSTREAM_REMOTE_ADDRESS%' }, append: false }],
  virtual_hosts: [
    {
      name: 'api',
      domains: ['api.example.com', '*.example.net'],
      retry_policy: { retry_on: '5xx,reset', num_retries: 2, per_try_timeout: '0.5s' },
      routes: [
        { match: { safe_regex: { google_re2: {}, regex: '^/v[0-9]+/.*' }, headers: [{ name: ':method', exact_match: 'GET' }] }, route: { cluster: 'backend', prefix_rewrite: '/' } },
        { match: { prefix: '/split' }, route: { weighted_clusters: { clusters: [{ name: 'backend', weight: 30 }, { name: 'web:v1', weight: 70 }] } } },
        { match: { path: '/old' }, redirect: { path_redirect: '/new', response_code: 'PERMANENT_REDIRECT' } },
      ],
    },
    { name: 'rest', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'web:v1', timeout: '2s' } }] },
  ],
};

export const xdsResources: FuzzSurface = {
  name: 'xds_resources',
  timeBoundMs: 2000,
  async open() {
    const schema = protoSchema();
    const extensions = builtinExtensions();
    const wire = new DiscoveryWire(schema);
    const responseType = schema.root.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
    const decoders = [false, true].map((reject) => new ResourceDecoder(schema, reject ? 'reject' : 'warn', createHeapStatsStore().counter('server.dynamic_unknown_fields'), silentLogger));
    const bootstrap = v3Bootstrap();
    const { listeners, clusters } = bootstrap.static_resources as { listeners: JsonObject[]; clusters: JsonObject[] };
    // The serving bootstrap's source, as LDS is given it: loaded, its listeners left to LDS.
    const served = loadBootstrap({ extensions, configYaml: JSON.stringify({ ...bootstrap, static_resources: { clusters } }), allowUnknownStaticFields: false });
    const bootstrapSource = served.bootstrap.source as JsonObject;
    const loadRoutes = routeConfigLoader({
      schema,
      context: bootstrapValidationContext(bootstrapSource, extensions),
      disabledExtensions: new Set(),
      activeClusters: () => new Set(clusters.map((c) => String(c['name']))),
      runtime: new LiveRuntime([]),
    });
    const responses = [
      { kind: 'cds', json: response(CLUSTER_RESOURCE, clusters) },
      { kind: 'lds', json: response(LISTENER_RESOURCE, listeners) },
      { kind: 'rds', json: response(ROUTE_CONFIGURATION_RESOURCE, [ROUTE_CONFIG]) },
    ];
    const binary = responses.map(({ kind, json }) => {
      const resources = (json['resources'] as JsonObject[]).map((resource) => encodeAny(schema, resource));
      return { kind: `${kind}_pb`, bytes: Buffer.from(responseType.encode(protojson.fromJson(responseType, { ...json, resources: [] })).finish()), resources };
    });
    return {
      generate(random: Random): FuzzInput {
        if (random() < 0.5) {
          const seed = pick(random, binary);
          const message = responseType.decode(seed.bytes) as unknown as Record<string, unknown>;
          message['resources'] = seed.resources.map((any) => ({ ...any, value: random() < 0.5 ? mutateBytes(random, Buffer.from(any.value)) : any.value }));
          const bytes = Buffer.from(responseType.encode(message).finish());
          return { kind: seed.kind, bytes: random() < 0.5 ? mutateBytes(random, bytes, 2) : bytes };
        }
        const seed = pick(random, responses);
        const tree = mutateJson(random, seed.json as Json, 1 + below(random, 4));
        const text = Buffer.from(JSON.stringify(tree));
        return { kind: `${seed.kind}_json`, bytes: random() < 0.2 ? mutateBytes(random, text, 2) : text };
      },
      async run(input: FuzzInput): Promise<void> {
        const [service, format] = input.kind.split('_') as [string, string];
        const type = TYPES[service];
        if (type === undefined) throw new Error(`no resource type for kind ${input.kind}`);
        const decoder = decoders[input.bytes.length % 2]!;
        try {
          const decoded =
            format === 'pb'
              ? await decoder.decodeParts(wire.decodeResponse(input.bytes, decoder.unknownFieldsAllowed()), type)
              : await decoder.decode(parsedJson(input.bytes), type);
          decoded.resources.forEach(({ resource }, i) => {
            const path = `resources[${i}]`;
            if (type === CLUSTER_RESOURCE) loadClusterResource(schema, resource, path, new Set(), extensions);
            else if (type === LISTENER_RESOURCE) loadListenerResource(resource, path, bootstrapSource, new Set(), extensions, '', new Set());
            else atField(path, () => loadRoutes(resource));
          });
        } catch (e) {
          if (!(e instanceof FieldError)) throw e;
        }
      },
      async close() {},
    };
  },
};

function response(type: ResourceType, resources: readonly JsonObject[]): JsonObject {
  const typeUrl = `type.googleapis.com/${type.v3TypeName}`;
  return { version_info: '1', nonce: 'n', type_url: typeUrl, resources: resources.map((r) => ({ '@type': typeUrl, ...r })) };
}

/** JSON that does not parse is the transport's to refuse: it never reaches the decoder. */
function parsedJson(bytes: Buffer): JsonValue {
  try {
    return JSON.parse(bytes.toString('utf8')) as JsonValue;
  } catch {
    throw new FieldError('', 'not JSON');
  }
}
