// A configured endpoint as one of its resolved hosts: the resolved address with the configured
// port, and the DNS name as hostname unless the endpoint names one (as Envoy sets it).

import type { LbEndpoint } from '../../../config/model';

export function resolvedEndpoint(configured: LbEndpoint, address: string): LbEndpoint {
  return {
    ...configured,
    address: { address, port: configured.address.port },
    hostname: configured.hostname !== '' ? configured.hostname : configured.address.address,
  };
}
