// One stats region: its root (header, directory of sections, segment table), the sections
// found through the directory, and the column table of writers. Shared memory in the proxy, a
// HeapMemory in tests.

import {
  COLUMN_RECORD_WORDS,
  ColumnField,
  COLUMNS_SECTION_BYTES,
  ColumnState,
  DIRECTORY_ENTRY_WORDS,
  DIRECTORY_OFFSET,
  DirectoryField,
  FORMAT_VERSION,
  HEADER_F64_ORIGINAL_START_MS,
  HeaderField,
  HOSTS_SECTION_BYTES,
  hotRestartVersion,
  MAGIC,
  MAX_COLUMNS,
  MAX_SECTIONS,
  ROOT_BYTES,
  SECTION_NAMES,
  SECTION_VERSIONS,
  SectionKind,
  STATS_SECTION_BYTES,
} from './region_layout';
import { processAlive } from './process_alive';
import { Address, offsetOf, Segments } from './segments';
import type { SharedMemorySource } from './shared_memory_source';
import { withSpinLock } from './spin_lock';

export class RegionMismatchError extends Error {
  constructor(readonly expected: string, readonly found: string) {
    super(
      `hot restart version mismatch: this binary uses shared memory layout ${expected} but the running ` +
        `proxy uses ${found}; the new binary is not hot-restart compatible with it (stop it, or start with another --base-id)`,
    );
  }
}

export class StillInitializingError extends Error {
  constructor(pid: number) {
    super(`previous proxy process is still initializing (pid ${pid}); retry the restart once it serves`);
  }
}

export class ColumnsExhaustedError extends Error {
  constructor(max: number) {
    super(`no free stats column left in the shared region (${max} in use); too many processes across live epochs`);
  }
}

const SECTION_BYTES: ReadonlyMap<SectionKind, number> = new Map([
  [SectionKind.Columns, COLUMNS_SECTION_BYTES],
  [SectionKind.Stats, STATS_SECTION_BYTES],
  [SectionKind.Hosts, HOSTS_SECTION_BYTES],
]);

/** A section's words: `view[base + i]` is its i-th Int32. */
export interface SectionView {
  readonly view: Int32Array;
  readonly base: number;
}

export interface RegionOptions {
  readonly memory: SharedMemorySource;
  readonly name: string;
  /** The process that maps it: lock owner and allocator. */
  readonly pid: number;
  /** Tests use small segments to exercise growth. */
  readonly segmentBytes?: number;
}

export class StatsRegion {
  readonly header: Int32Array;
  private readonly headerF64: Float64Array;
  readonly segments: Segments;
  private readonly columnsSection: SectionView;

  private constructor(readonly options: RegionOptions, root: ArrayBuffer) {
    this.header = new Int32Array(root);
    this.headerF64 = new Float64Array(root, 0, HEADER_F64_ORIGINAL_START_MS + 1);
    this.segments = new Segments(options.memory, options.name, this.header, options.pid, options.segmentBytes);
    this.columnsSection = this.section(SectionKind.Columns);
  }

  /** A new region (epoch 0, or a region private to this process tree). */
  static create(options: RegionOptions, baseId: number, startMs: number): StatsRegion {
    const root = options.memory.create(options.name, ROOT_BYTES);
    const h = new Int32Array(root);
    h[HeaderField.FormatVersion] = FORMAT_VERSION;
    h[HeaderField.BaseId] = baseId;
    new Float64Array(root, 0, HEADER_F64_ORIGINAL_START_MS + 1)[HEADER_F64_ORIGINAL_START_MS] = startMs;
    // Written last: a region without the magic is never trusted by attach().
    Atomics.store(h, HeaderField.Magic, MAGIC);
    try {
      return new StatsRegion(options, root);
    } catch (e) {
      // No room for its first segment (a full /dev/shm): leave nothing behind.
      StatsRegion.unlinkStale(options.memory, options.name);
      throw e;
    }
  }

  /** Maps an existing region (a later epoch, or a worker), checking every section it uses. */
  static attach(options: RegionOptions): StatsRegion {
    const root = options.memory.open(options.name);
    const h = new Int32Array(root);
    if (root.byteLength < ROOT_BYTES || Atomics.load(h, HeaderField.Magic) !== MAGIC) {
      throw new RegionMismatchError(hotRestartVersion(), 'uninitialized');
    }
    const found = describeRegion(h);
    if (h[HeaderField.FormatVersion] !== FORMAT_VERSION) throw new RegionMismatchError(hotRestartVersion(), found);
    for (const [kind, version] of SECTION_VERSIONS) {
      const entry = findSection(h, kind);
      if (entry >= 0 && h[entry + DirectoryField.Version] !== version) throw new RegionMismatchError(hotRestartVersion(), found);
    }
    return new StatsRegion(options, root);
  }

  /** Unlinks a region left behind under `name` and its segments; absent is fine. */
  static unlinkStale(memory: SharedMemorySource, name: string): void {
    let root: ArrayBuffer;
    try {
      root = memory.open(name);
    } catch {
      return;
    }
    const count = root.byteLength >= ROOT_BYTES ? Atomics.load(new Int32Array(root), HeaderField.SegmentCount) : 0;
    for (let n = 1; n <= count; n++) {
      try {
        memory.unlink(`${name}.${n}`);
      } catch {
        // Already gone: a crash between creating and counting it, or a cleanup that ran first.
      }
    }
    memory.unlink(name);
  }

  /** Unlinks this region's segments and root. */
  unlink(): void {
    this.segments.unlinkAll();
    this.options.memory.unlink(this.options.name);
  }

  /**
   * The section of `kind`, created (under the directory lock) when this region has none yet:
   * a region made by an older build gains the sections a newer build brings.
   */
  section(kind: SectionKind): SectionView {
    let entry = findSection(this.header, kind);
    if (entry < 0) {
      entry = withSpinLock(this.header, HeaderField.DirectoryLock, this.options.pid, this.segments.onContention, () => {
        const again = findSection(this.header, kind);
        return again >= 0 ? again : this.addSection(kind);
      });
    }
    const address = Segments.read(this.header, entry + DirectoryField.Address);
    return { view: this.segments.i32(address), base: offsetOf(address) / 4 };
  }

  private addSection(kind: SectionKind): number {
    for (let i = 0; i < MAX_SECTIONS; i++) {
      const entry = DIRECTORY_OFFSET + i * DIRECTORY_ENTRY_WORDS;
      if (Atomics.load(this.header, entry + DirectoryField.Kind) !== 0) continue;
      const bytes = SECTION_BYTES.get(kind)!;
      const address: Address = this.segments.alloc(bytes);
      this.header[entry + DirectoryField.Version] = SECTION_VERSIONS.get(kind)!;
      this.header[entry + DirectoryField.Length] = bytes;
      Segments.publish(this.header, entry + DirectoryField.Address, address);
      Atomics.store(this.header, entry + DirectoryField.Kind, kind);
      return entry;
    }
    throw new Error(`stats region directory is full (${MAX_SECTIONS} sections)`);
  }

  get originalStartMs(): number {
    return this.headerF64[HEADER_F64_ORIGINAL_START_MS]!;
  }

  get currentEpoch(): number {
    return Atomics.load(this.header, HeaderField.CurrentEpoch);
  }

  set currentEpoch(epoch: number) {
    Atomics.store(this.header, HeaderField.CurrentEpoch, epoch);
  }

  /**
   * Marks this process as the epoch being initialized. Throws StillInitializingError while
   * another live process holds the mark; a mark left by a process that died is taken over.
   */
  beginInitializing(pid: number): void {
    for (;;) {
      const holder = Atomics.compareExchange(this.header, HeaderField.InitializingPid, 0, pid);
      if (holder === 0 || holder === pid) return;
      if (processAlive(holder)) throw new StillInitializingError(holder);
      Atomics.compareExchange(this.header, HeaderField.InitializingPid, holder, 0);
    }
  }

  endInitializing(pid: number): void {
    Atomics.compareExchange(this.header, HeaderField.InitializingPid, pid, 0);
  }

  /** Pids recorded for the columns of epochs other than `epoch` that are still counted live. */
  liveColumnsOfOtherEpochs(epoch: number): { column: number; pid: number }[] {
    const out: { column: number; pid: number }[] = [];
    for (let col = 0; col < MAX_COLUMNS; col++) {
      if (this.columnState(col) === ColumnState.Live && this.columnEpoch(col) !== epoch) {
        out.push({ column: col, pid: this.columnWord(col, ColumnField.Pid) });
      }
    }
    return out;
  }

  columnState(col: number): ColumnState {
    return Atomics.load(this.columnsSection.view, this.columnIndex(col, ColumnField.State)) as ColumnState;
  }

  columnEpoch(col: number): number {
    return this.columnWord(col, ColumnField.Epoch);
  }

  /** Claims a free column for a writer of `epoch` (CAS, so two epochs never take the same one). */
  claimColumn(epoch: number, pid: number): number {
    const { view } = this.columnsSection;
    for (let col = 0; col < MAX_COLUMNS; col++) {
      if (Atomics.compareExchange(view, this.columnIndex(col, ColumnField.State), ColumnState.Free, ColumnState.Live) === ColumnState.Free) {
        view[this.columnIndex(col, ColumnField.Epoch)] = epoch;
        view[this.columnIndex(col, ColumnField.Pid)] = pid;
        return col;
      }
    }
    throw new ColumnsExhaustedError(MAX_COLUMNS);
  }

  retireColumn(col: number): void {
    Atomics.store(this.columnsSection.view, this.columnIndex(col, ColumnField.State), ColumnState.Retired);
  }

  /** Returns a folded column to the free pool (its cells must already be zero). */
  freeColumn(col: number): void {
    const { view } = this.columnsSection;
    view[this.columnIndex(col, ColumnField.Epoch)] = 0;
    view[this.columnIndex(col, ColumnField.Pid)] = 0;
    Atomics.store(view, this.columnIndex(col, ColumnField.State), ColumnState.Free);
  }

  private columnIndex(col: number, field: ColumnField): number {
    return this.columnsSection.base + col * COLUMN_RECORD_WORDS + field;
  }

  private columnWord(col: number, field: ColumnField): number {
    return this.columnsSection.view[this.columnIndex(col, field)]!;
  }
}

function findSection(header: Int32Array, kind: SectionKind): number {
  for (let i = 0; i < MAX_SECTIONS; i++) {
    const entry = DIRECTORY_OFFSET + i * DIRECTORY_ENTRY_WORDS;
    if (Atomics.load(header, entry + DirectoryField.Kind) === kind) return entry;
  }
  return -1;
}

/** The compatibility string of a mapped region, in hotRestartVersion()'s form. */
function describeRegion(header: Int32Array): string {
  const sections: string[] = [];
  for (let i = 0; i < MAX_SECTIONS; i++) {
    const entry = DIRECTORY_OFFSET + i * DIRECTORY_ENTRY_WORDS;
    const kind: number = Atomics.load(header, entry + DirectoryField.Kind);
    if (kind !== 0) sections.push(`${SECTION_NAMES.get(kind as SectionKind) ?? `kind${kind}`}:${header[entry + DirectoryField.Version]}`);
  }
  return `${header[HeaderField.FormatVersion]}.${sections.join('.')}`;
}
