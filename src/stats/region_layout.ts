// Byte layout of the shared stats region. Pure: offsets are computed from a few parameters,
// and the parameters plus FORMAT_VERSION form the hot-restart compatibility string, so two
// binaries with different layouts refuse to share a region.
//
//   header | column table | slot meta | names | values (one column per writer) | flags
//
// A "column" is one writer's private array of 8-byte cells, one per stat slot. A writer only
// ever touches its own column, so increments are plain typed-array writes with no false
// sharing; readers sum the live columns.

/** Bump when the meaning of any byte below changes. */
export const FORMAT_VERSION = 1;

export interface LayoutParams {
  /** Stat slots (counters, gauges, per-host stats); a power of two for cheap probing. */
  readonly maxStats: number;
  /** Writer columns: supervisors and workers of every epoch that has not been folded yet. */
  readonly maxColumns: number;
  /** Bytes reserved for one stat name (UTF-8). */
  readonly nameBytes: number;
}

export const DEFAULT_LAYOUT: LayoutParams = { maxStats: 65536, maxColumns: 128, nameBytes: 256 };

export const HEADER_BYTES = 4096;
export const COLUMN_RECORD_BYTES = 16;
export const SLOT_META_BYTES = 8;

/** Int32 indexes into the header (Int32Array view over the region). */
export const enum HeaderField {
  Magic = 0,
  FormatVersion = 1,
  MaxStats = 2,
  MaxColumns = 3,
  NameBytes = 4,
  /** Epoch of the newest supervisor; never_import gauges report only its columns. */
  CurrentEpoch = 5,
  /** Pid of an epoch still initializing, 0 when none: a second restart must wait for it. */
  InitializingPid = 6,
  BaseId = 7,
}

/** Float64 indexes into the header (Float64Array view), after the Int32 fields. */
export const enum HeaderF64 {
  /** Wall-clock ms at which epoch 0 started: total uptime spans every restart. */
  OriginalStartMs = 8,
}

export const MAGIC = 0x50525859; // "PRXY"

export const enum ColumnState {
  Free = 0,
  Live = 1,
  /** Its process exited: counters still count, gauges were zeroed. */
  Retired = 2,
}

/** Int32 indexes within a column record. */
export const enum ColumnField {
  State = 0,
  Epoch = 1,
  Pid = 2,
}

export const enum SlotState {
  Empty = 0,
  Claiming = 1,
  Ready = 2,
}

export const enum StatKind {
  Counter = 1,
  Gauge = 2,
}

export const enum SlotFlag {
  /** Per-host stats: shown by /clusters, not by /stats. */
  Hidden = 1,
  /** Gauge reported for the current epoch only (Envoy's NeverImport). */
  NeverImport = 2,
}

/** Int32 indexes within a slot meta record; kind, flags and name length share word 1. */
export const enum SlotField {
  State = 0,
  Info = 1,
}

export interface RegionLayout extends LayoutParams {
  readonly columnTableOffset: number;
  readonly slotMetaOffset: number;
  readonly namesOffset: number;
  readonly valuesOffset: number;
  /** One byte per slot per column: set on a writer's first touch (?usedonly). */
  readonly usedOffset: number;
  readonly totalBytes: number;
}

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

export function computeLayout(params: LayoutParams): RegionLayout {
  const { maxStats, maxColumns, nameBytes } = params;
  if (!Number.isInteger(Math.log2(maxStats))) throw new RangeError(`maxStats must be a power of two, got ${maxStats}`);
  if (nameBytes % 8 !== 0) throw new RangeError(`nameBytes must be a multiple of 8, got ${nameBytes}`);
  const columnTableOffset = HEADER_BYTES;
  const slotMetaOffset = columnTableOffset + maxColumns * COLUMN_RECORD_BYTES;
  const namesOffset = slotMetaOffset + maxStats * SLOT_META_BYTES;
  // Values start on a page boundary so each column's cells begin on their own cache lines.
  const valuesOffset = align(namesOffset + maxStats * nameBytes, 4096);
  const usedOffset = valuesOffset + maxColumns * maxStats * 8;
  const totalBytes = align(usedOffset + maxColumns * maxStats, 4096);
  return { ...params, columnTableOffset, slotMetaOffset, namesOffset, valuesOffset, usedOffset, totalBytes };
}

/** The opaque compatibility string of --hot-restart-version and GET /hot_restart_version. */
export function hotRestartVersion(params: LayoutParams): string {
  return `${FORMAT_VERSION}.${params.maxStats}.${params.maxColumns}.${params.nameBytes}`;
}
