// The `version` gauge of a subscription: Envoy sets it to the xxHash64 of version_info. Gauges
// here are doubles, so the hash is cut to its low 53 bits, which a double holds exactly.

import { xxHash64 } from '../../common/hash/xxhash64';

const LOW_53_BITS = (1n << 53n) - 1n;

export function versionHash(versionInfo: string): number {
  return Number(xxHash64(versionInfo) & LOW_53_BITS);
}
