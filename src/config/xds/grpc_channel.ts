// Where a gRPC config source's streams go: an envoy_grpc service names a static cluster of the
// bootstrap, whose hosts take the streams in turn (a new stream after a failure tries the next
// one); a google_grpc service names a target the gRPC library resolves. Plaintext HTTP/2 either
// way: validation refuses a management cluster with a transport socket, the capability check
// google_grpc's credentials.

import type * as grpc from '@grpc/grpc-js';
import { isIP } from 'node:net';
import type { GrpcTarget } from '../config_source';
import { type ClusterAddresses, ClusterHosts } from './cluster_hosts';

// A response as large as the management server sends: Envoy 1.16 sets no limit.
const CHANNEL_OPTIONS: grpc.ChannelOptions = { 'grpc.max_receive_message_length': -1, 'grpc.enable_retries': 0 };

export class GrpcChannel {
  /** An envoy_grpc target's hosts. */
  private readonly hosts: ClusterHosts | null;

  constructor(
    private readonly target: GrpcTarget,
    clusterAddresses: ClusterAddresses,
  ) {
    this.hosts = target.kind === 'envoy_grpc' ? new ClusterHosts(target.clusterName, clusterAddresses) : null;
  }

  /** What logs call the management server. */
  describe(): string {
    return this.target.kind === 'envoy_grpc' ? `cluster '${this.target.clusterName}'` : this.target.targetUri;
  }

  /** A client for one new stream, or null when the cluster has no host to connect to. */
  openClient(): grpc.Client | null {
    const { Client, credentials: channelCredentials } = grpcLibrary();
    const credentials = channelCredentials.createInsecure();
    if (this.target.kind === 'google_grpc') return new Client(this.target.targetUri, credentials, CHANNEL_OPTIONS);
    const host = this.hosts!.pick();
    if (host === null) return null;
    const address = isIP(host.address) === 6 ? `[${host.address}]` : host.address;
    // Envoy's gRPC client sends the cluster's name as :authority.
    return new Client(`${address}:${host.port}`, credentials, { ...CHANNEL_OPTIONS, 'grpc.default_authority': this.target.clusterName });
  }
}

/**
 * grpc-js is 64 modules, a tenth of what a process loads at start: loaded when the first channel
 * opens, so a process without a gRPC config source or service never pays for it.
 */
function grpcLibrary(): typeof grpc {
  return require('@grpc/grpc-js') as typeof grpc;
}
