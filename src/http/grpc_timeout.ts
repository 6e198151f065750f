// The grpc-timeout request header (gRPC over HTTP/2's TimeoutValue TimeoutUnit), read and written
// as Envoy 1.16's Grpc::Common does: up to 8 digits and a unit (H M S m u n), sub-millisecond
// units rounded up; written in the smallest unit that keeps 8 digits, hours clipped. Pure.

const MAX_VALUE = 99_999_999;
/** Milliseconds per unit; per millisecond, negated, for the units below it. */
const SCALE: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: -1000, n: -1_000_000 };

/** The timeout in milliseconds; null for a value Envoy ignores. */
export function parseGrpcTimeout(header: string): number | null {
  const match = /^(\d+)([HMSmun])$/.exec(header);
  if (match === null) return null;
  const scale = SCALE[match[2]!]!;
  const count = Number(match[1]);
  return scale > 0 ? count * scale : Math.ceil(count / -scale);
}

export function formatGrpcTimeout(ms: number): string {
  const units = ['m', 'S', 'M', 'H'];
  let time = ms;
  let unit = 0;
  if (time > MAX_VALUE) {
    time = Math.floor(time / 1000);
    unit++;
  }
  while (time > MAX_VALUE) {
    if (units[unit] === 'H') time = MAX_VALUE;
    else {
      time = Math.floor(time / 60);
      unit++;
    }
  }
  return `${time}${units[unit]}`;
}
