// The admin's allowed_source_ranges: whether a client's address is in one of the CIDR ranges.
// An IPv4 client of a dual-stack listener shows as ::ffff:a.b.c.d; BlockList judges it by its
// IPv4 address.

import { BlockList, isIPv4 } from 'node:net';
import type { CidrRange } from '../config/model';

export class SourceAllowList {
  private readonly ranges = new BlockList();

  /** @param ranges validated: IP prefixes, lengths within their family */
  constructor(ranges: readonly CidrRange[]) {
    for (const range of ranges) this.ranges.addSubnet(range.addressPrefix, range.prefixLen, isIPv4(range.addressPrefix) ? 'ipv4' : 'ipv6');
  }

  allows(address: string): boolean {
    return this.ranges.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
  }
}
