// The rows of the benchmark: which proxy (the subject) carries which traffic (the group).
// Every proxy is measured against the same nginx upstream, so the rows differ only by the hop
// in the middle.

/**
 * What the proxy under test terminates: HTTP/1.1, TCP, HTTP/2 with prior knowledge, or TLS
 * carrying HTTP/1.1. The upstream is the same plain HTTP/1.1 nginx for all of them.
 */
export type Layer = 'http' | 'tcp' | 'h2' | 'tls';
/**
 * `proxy-features`: our proxy with what an operator runs: a file access log, a health-checked,
 * outlier-detected, circuit-broken LEAST_REQUEST cluster, and a retry policy on the route.
 */
export type Subject = 'direct' | 'nginx' | 'node' | 'proxy' | 'proxy-features';

export const SUBJECTS: readonly Subject[] = ['direct', 'nginx', 'node', 'proxy', 'proxy-features'];

/** The upstream answers `/` with this 13-byte body and LARGE_PATH with LARGE_BODY_BYTES bytes. */
export const SMALL_BODY = 'Hello, World!';
export const SMALL_PATH = '/';
export const LARGE_PATH = '/16k';
export const LARGE_BODY_BYTES = 16 * 1024;
/** What the h2-post row's requests carry: a gRPC unary call's size. */
export const POST_BODY_BYTES = 100;

export interface Group {
  readonly id: string;
  readonly title: string;
  readonly layer: Layer;
  /** The upstream path the load requests; it selects the body size. */
  readonly path: string;
  /** The load generator: wrk for HTTP/1.1 (over TLS too), h2load for HTTP/2. */
  readonly load: 'wrk' | 'h2load';
  /** Each request on a new connection (`connection: close`): with TLS, a full handshake per request. */
  readonly closeEachRequest?: boolean;
  /** Each connection waits this long after a response before its next request: a moderate, fixed load for latency. */
  readonly pacedMs?: number;
  /** Each request is a POST of a body this long (h2load only): a gRPC unary call's shape. */
  readonly requestBodyBytes?: number;
}

/** The paced row's wait between a connection's response and its next request. */
export const PACED_MS = 10;

export const GROUPS: readonly Group[] = [
  { id: 'http', title: 'HTTP/1.1, 13-byte body', layer: 'http', path: SMALL_PATH, load: 'wrk' },
  { id: 'http-16k', title: 'HTTP/1.1, 16 KiB body', layer: 'http', path: LARGE_PATH, load: 'wrk' },
  {
    id: 'http-paced',
    title: 'HTTP/1.1, 13-byte body, each connection waiting 10 ms between requests (latency at a moderate load)',
    layer: 'http',
    path: SMALL_PATH,
    load: 'wrk',
    pacedMs: PACED_MS,
  },
  { id: 'tcp', title: 'TCP proxy (HTTP/1.1 through an L4 hop), 13-byte body', layer: 'tcp', path: SMALL_PATH, load: 'wrk' },
  {
    id: 'h2',
    title: 'HTTP/2 downstream (h2load, prior knowledge, 10 streams per connection) to an HTTP/1.1 upstream, 13-byte body',
    layer: 'h2',
    path: SMALL_PATH,
    load: 'h2load',
  },
  {
    id: 'h2-post',
    title: 'HTTP/2 downstream as the h2 row, each request a POST of a 100-byte body, 13-byte response',
    layer: 'h2',
    path: SMALL_PATH,
    load: 'h2load',
    requestBodyBytes: POST_BODY_BYTES,
  },
  { id: 'tls', title: 'TLS termination, keep-alive, 13-byte body', layer: 'tls', path: SMALL_PATH, load: 'wrk' },
  {
    id: 'tls-handshake',
    title: 'TLS termination, a new connection (full handshake) per request, 13-byte body',
    layer: 'tls',
    path: SMALL_PATH,
    load: 'wrk',
    closeEachRequest: true,
  },
];

// node-http-proxy speaks HTTP only, so it has no TCP row; the features row is an L7 one.
// The upstream speaks neither HTTP/2 nor TLS, so those groups compare the two proxies alone.
const SUBJECTS_BY_LAYER: Readonly<Record<Layer, readonly Subject[]>> = {
  http: ['direct', 'nginx', 'node', 'proxy', 'proxy-features'],
  tcp: ['direct', 'nginx', 'proxy'],
  h2: ['nginx', 'proxy'],
  tls: ['nginx', 'proxy'],
};

export interface Row {
  readonly group: Group;
  readonly subject: Subject;
  readonly label: string;
}

/** Rows restricted to the given subjects and groups; an empty set means no restriction. */
export interface Selection {
  readonly subjects: ReadonlySet<Subject>;
  readonly groups: ReadonlySet<string>;
}

function rowLabel(subject: Subject, layer: Layer): string {
  switch (subject) {
    case 'direct':
      return 'direct (upstream)';
    case 'nginx':
      return layer === 'tcp' ? 'nginx stream' : 'nginx';
    case 'node':
      return 'node-http-proxy';
    case 'proxy':
      return layer === 'tcp' ? 'proxy tcp_proxy' : 'proxy';
    case 'proxy-features':
      return "proxy, operator's features";
  }
}

/** The selected rows, ordered by group and then by subject as the tables print them. */
export function planRows(selection: Selection): Row[] {
  const rows: Row[] = [];
  for (const group of GROUPS) {
    if (selection.groups.size > 0 && !selection.groups.has(group.id)) continue;
    for (const subject of SUBJECTS_BY_LAYER[group.layer]) {
      if (selection.subjects.size > 0 && !selection.subjects.has(subject)) continue;
      rows.push({ group, subject, label: rowLabel(subject, group.layer) });
    }
  }
  return rows;
}

/** A subject started once for a layer serves every row of that layer's groups. */
export interface Service {
  readonly subject: Subject;
  readonly layer: Layer;
  readonly rows: readonly Row[];
}

/** The rows grouped by the process that serves them, in order of first use. */
export function planServices(rows: readonly Row[]): Service[] {
  const services = new Map<string, { subject: Subject; layer: Layer; rows: Row[] }>();
  for (const row of rows) {
    const key = `${row.subject}/${row.group.layer}`;
    const service = services.get(key) ?? { subject: row.subject, layer: row.group.layer, rows: [] };
    service.rows.push(row);
    services.set(key, service);
  }
  return [...services.values()];
}
