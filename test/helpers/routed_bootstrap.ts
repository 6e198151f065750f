// A bootstrap for admin tests that need traffic: one HTTP listener `http_in` on loopback port 0
// routing everything to cluster `backend` at 127.0.0.1:<upstreamPort>.

import { httpListener, Json, localCluster } from './config_fixtures';

export function routedBootstrap(upstreamPort: number, admin?: Json): Json {
  return {
    ...(admin === undefined ? {} : { admin }),
    static_resources: {
      listeners: [httpListener('http_in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])],
      clusters: [localCluster('backend', upstreamPort)],
    },
  };
}
