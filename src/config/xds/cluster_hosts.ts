// How the supervisor's own clients (gRPC and REST config sources, stats sinks) reach a static
// cluster of the bootstrap: through the hosts its membership has now, one after the other, so
// that a new connection after a failure goes to the next host rather than the same one.

export interface HostAddress {
  readonly address: string;
  readonly port: number;
}

/** The hosts a static cluster has now (the supervisor's membership). */
export type ClusterAddresses = (cluster: string) => readonly HostAddress[];

export class ClusterHosts {
  private next = 0;

  constructor(
    readonly clusterName: string,
    private readonly addresses: ClusterAddresses,
  ) {}

  /** The host the next connection goes to; null when the cluster has none now. */
  pick(): HostAddress | null {
    const hosts = this.addresses(this.clusterName);
    return hosts.length === 0 ? null : hosts[this.next++ % hosts.length]!;
  }
}
