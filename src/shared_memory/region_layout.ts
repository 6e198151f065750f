// Byte layout of the shared stats region. Pure: word indexes and sizes, no memory.
//
// The region is a small root object plus segments that are added as the stats grow:
//
//   root:     header | directory of sections | segment table
//   segments: blocks handed out by a bump allocator (stat chunks, names, value blocks, ...)
//
// An address names a block as (segment number, byte offset) and is stored as two Int32 words,
// [offset, segment], the segment written last so a non-zero segment word means "published".
// Every section is found through the directory by kind, and carries its own version: a later
// build adds a kind without changing the compatibility of the ones it leaves alone.

/** Bump when the meaning of any root byte (header, directory, segment table) changes. */
export const FORMAT_VERSION = 2;

export const MAGIC = 0x50525859; // "PRXY"

/** Int32 indexes into the root header. */
export const enum HeaderField {
  Magic = 0,
  FormatVersion = 1,
  BaseId = 2,
  /** Epoch of the newest supervisor; never_import gauges report only its columns. */
  CurrentEpoch = 3,
  /** Pid of an epoch still initializing, 0 when none: a second restart must wait for it. */
  InitializingPid = 4,
  /** Segments created so far; segment numbers are 1..SegmentCount. */
  SegmentCount = 5,
  /** Pid of the process creating a segment, 0 when none. */
  GrowLock = 6,
  /** Pid of the process adding a section to the directory, 0 when none. */
  DirectoryLock = 7,
}

/** Float64 index into the root header: wall-clock ms at which epoch 0 started. */
export const HEADER_F64_ORIGINAL_START_MS = 8;

export const HEADER_WORDS = 64;

export const enum SectionKind {
  Columns = 1,
  Stats = 2,
  Hosts = 3,
}

/** The version of each section this build reads and writes. */
export const SECTION_VERSIONS: ReadonlyMap<SectionKind, number> = new Map([
  [SectionKind.Columns, 1],
  [SectionKind.Stats, 2],
  [SectionKind.Hosts, 2],
]);

export const SECTION_NAMES: ReadonlyMap<SectionKind, string> = new Map([
  [SectionKind.Columns, 'columns'],
  [SectionKind.Stats, 'stats'],
  [SectionKind.Hosts, 'hosts'],
]);

/** Directory entry: kind, version, length in bytes, address (2 words). */
export const enum DirectoryField {
  Kind = 0,
  Version = 1,
  Length = 2,
  Address = 3,
}
export const DIRECTORY_OFFSET = HEADER_WORDS;
export const DIRECTORY_ENTRY_WORDS = 8;
export const MAX_SECTIONS = 32;

/** Segment table entry: size in bytes, allocation cursor in bytes. */
export const enum SegmentField {
  Size = 0,
  Cursor = 1,
}
export const SEGMENT_TABLE_OFFSET = DIRECTORY_OFFSET + MAX_SECTIONS * DIRECTORY_ENTRY_WORDS;
export const SEGMENT_ENTRY_WORDS = 2;
/** 4096 segments of 4 MiB or more: the region's ceiling is memory, not this table. */
export const MAX_SEGMENTS = 4096;

export const ROOT_BYTES = align((SEGMENT_TABLE_OFFSET + MAX_SEGMENTS * SEGMENT_ENTRY_WORDS) * 4, 4096);

/** Segments are this big unless one allocation needs more. */
export const DEFAULT_SEGMENT_BYTES = 4 << 20;

// --- columns section: one record per writer (a supervisor or worker of some epoch) ---

export const MAX_COLUMNS = 128;
export const COLUMN_RECORD_WORDS = 4;
export const COLUMNS_SECTION_BYTES = MAX_COLUMNS * COLUMN_RECORD_WORDS * 4;

export const enum ColumnState {
  Free = 0,
  Live = 1,
  /** Its process exited: counters still count, gauges were zeroed. */
  Retired = 2,
}

export const enum ColumnField {
  State = 0,
  Epoch = 1,
  Pid = 2,
}

// --- stats section: a name index and a directory of slot chunks ---

export const enum StatsField {
  SlotCount = 0,
}
export const STATS_HEADER_WORDS = 8;
/**
 * 4 MiB of bucket heads: 10,000 clusters' ~940,000 names keep chains about one long, where
 * 2^17 made every new name walk seven records (a cache miss each) before linking itself.
 */
export const NAME_BUCKETS = 1 << 20;
/** 65536 chunks of 1024 slots: 64 M stats, past what memory holds at ~100 bytes each. */
export const MAX_CHUNKS = 1 << 16;
export const STATS_BUCKETS_OFFSET = STATS_HEADER_WORDS;
export const STATS_CHUNK_DIR_OFFSET = STATS_BUCKETS_OFFSET + NAME_BUCKETS;
export const STATS_SECTION_BYTES = (STATS_CHUNK_DIR_OFFSET + MAX_CHUNKS * 2) * 4;

export const CHUNK_SHIFT = 10;
export const CHUNK_SLOTS = 1 << CHUNK_SHIFT;

/**
 * A chunk block: the address of its reset baselines, one value-block address per column, then
 * the slot records. A value block is one column's 8-byte cells for the chunk's slots.
 */
export const CHUNK_BASELINE = 0;
export const CHUNK_COLUMN_BLOCKS = 2;
export const CHUNK_HEADER_WORDS = CHUNK_COLUMN_BLOCKS + MAX_COLUMNS * 2;
export const SLOT_WORDS = 12;
export const CHUNK_BLOCK_BYTES = (CHUNK_HEADER_WORDS + CHUNK_SLOTS * SLOT_WORDS) * 4;
export const VALUE_BLOCK_BYTES = CHUNK_SLOTS * 8;

export const enum SlotField {
  State = 0,
  /** kind | flags << 8 */
  Info = 1,
  NameAddress = 2,
  NameLength = 4,
  Hash = 5,
  /** Next slot + 1 in the same name bucket; 0 ends the chain. */
  Next = 6,
  /** Written at least once by some writer (?usedonly). */
  Used = 7,
  /** A cells object's block. */
  ObjectAddress = 8,
  ObjectLength = 10,
}

export const enum SlotState {
  Empty = 0,
  Ready = 1,
  /** Lost a race to publish a name another process published first; never listed. */
  Dead = 2,
}

export const enum StatKind {
  Counter = 1,
  Gauge = 2,
  Histogram = 3,
  /** Int32 cells updated with Atomics by every writer (circuit breaker counts). */
  Cells = 4,
}

export const enum SlotFlag {
  /** Gauge reported for the current epoch only (Envoy's NeverImport). */
  NeverImport = 1,
}

/** A histogram's per-writer block: the running sum (Float64), then one Uint32 count per bucket. */
export const HISTOGRAM_SUM_BYTES = 8;

// --- hosts section: per-host statistics in reusable slots ---

export const enum HostsField {
  HighWater = 0,
  /** Free host slot + 1; 0 when the free list is empty. */
  FreeHead = 1,
  Lock = 2,
}
export const HOSTS_HEADER_WORDS = 8;
export const MAX_HOST_CHUNKS = 1 << 14;
export const HOSTS_SECTION_BYTES = (HOSTS_HEADER_WORDS + MAX_HOST_CHUNKS * 2) * 4;
export const HOST_CHUNK_SHIFT = 8;
export const HOST_CHUNK_SLOTS = 1 << HOST_CHUNK_SHIFT;

/** The per-host statistics, in cell order. */
export const HOST_STAT_NAMES = [
  'cx_active',
  'cx_connect_fail',
  'cx_total',
  'rq_active',
  'rq_error',
  'rq_success',
  'rq_timeout',
  'rq_total',
] as const;
export type HostStatName = (typeof HOST_STAT_NAMES)[number];
export const HOST_STATS = HOST_STAT_NAMES.length;

export const enum HostRecordField {
  Generation = 0,
  State = 1,
  NextFree = 2,
  /** Health flags of the host, shared by every writer. */
  HealthFlags = 3,
  // Outlier detection's counts, shared by every worker (Envoy's DetectorHostMonitor): the
  // consecutive failures so far, and the requests of the current interval, which the
  // supervisor's detector takes (and zeroes) at each interval.
  Consecutive5xx = 4,
  ConsecutiveGatewayFailure = 5,
  ConsecutiveLocalOriginFailure = 6,
  ExternalSuccess = 7,
  ExternalTotal = 8,
  LocalOriginSuccess = 9,
  LocalOriginTotal = 10,
}
export const HOST_RECORD_WORDS = 11;
/** The outlier detection words of a record: from Consecutive5xx to the end. */
export const HOST_OUTLIER_WORDS = HOST_RECORD_WORDS - 4;
export const HOST_CHUNK_HEADER_WORDS = MAX_COLUMNS * 2;
export const HOST_CHUNK_BLOCK_BYTES = (HOST_CHUNK_HEADER_WORDS + HOST_CHUNK_SLOTS * HOST_RECORD_WORDS) * 4;
export const HOST_VALUE_BLOCK_BYTES = HOST_CHUNK_SLOTS * HOST_STATS * 8;

export function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/**
 * The opaque compatibility string of --hot-restart-version and GET /hot_restart_version: the
 * root format and the version of every section, never how many stats a config creates.
 */
export function hotRestartVersion(): string {
  const sections = [...SECTION_VERSIONS].map(([kind, version]) => `${SECTION_NAMES.get(kind)}:${version}`);
  return `${FORMAT_VERSION}.${sections.join('.')}`;
}
