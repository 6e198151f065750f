// The addresses of the downstream connection an upstream connection serves, which the upstream
// PROXY protocol header and ORIGINAL_DST's balancer read; a net.Socket is one.

export interface DownstreamAddresses {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
  readonly localAddress?: string | undefined;
  readonly localPort?: number | undefined;
  /** The original_dst listener filter set the local address to the connection's original destination. */
  readonly localAddressRestored?: boolean;
}
