// Typed views over one stats region (shared memory, or a plain ArrayBuffer in tests), the
// header's initialization and checks, and the column table.

import {
  ColumnField,
  ColumnState,
  COLUMN_RECORD_BYTES,
  computeLayout,
  FORMAT_VERSION,
  HeaderF64,
  HeaderField,
  hotRestartVersion,
  LayoutParams,
  MAGIC,
  RegionLayout,
} from './region_layout';

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

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class ColumnsExhaustedError extends Error {
  constructor(max: number) {
    super(`no free stats column left in the shared region (${max} in use); too many processes across live epochs`);
  }
}

export class StatsRegion {
  readonly layout: RegionLayout;
  readonly header: Int32Array;
  readonly headerF64: Float64Array;
  readonly columns: Int32Array;
  readonly meta: Int32Array;
  readonly names: Uint8Array;
  readonly values: Float64Array;
  readonly used: Uint8Array;

  private constructor(readonly buffer: ArrayBuffer, layout: RegionLayout) {
    if (buffer.byteLength < layout.totalBytes) {
      throw new RangeError(`stats region is ${buffer.byteLength} bytes, layout needs ${layout.totalBytes}`);
    }
    this.layout = layout;
    this.header = new Int32Array(buffer, 0, 64);
    this.headerF64 = new Float64Array(buffer, 0, 32);
    this.columns = new Int32Array(buffer, layout.columnTableOffset, (layout.maxColumns * COLUMN_RECORD_BYTES) / 4);
    this.meta = new Int32Array(buffer, layout.slotMetaOffset, layout.maxStats * 2);
    this.names = new Uint8Array(buffer, layout.namesOffset, layout.maxStats * layout.nameBytes);
    this.values = new Float64Array(buffer, layout.valuesOffset, layout.maxColumns * layout.maxStats);
    this.used = new Uint8Array(buffer, layout.usedOffset, layout.maxColumns * layout.maxStats);
  }

  static bytesFor(params: LayoutParams): number {
    return computeLayout(params).totalBytes;
  }

  /** Lays out a zero-filled buffer (epoch 0). */
  static initialize(buffer: ArrayBuffer, params: LayoutParams, baseId: number, startMs: number): StatsRegion {
    const region = new StatsRegion(buffer, computeLayout(params));
    const h = region.header;
    h[HeaderField.FormatVersion] = FORMAT_VERSION;
    h[HeaderField.MaxStats] = params.maxStats;
    h[HeaderField.MaxColumns] = params.maxColumns;
    h[HeaderField.NameBytes] = params.nameBytes;
    h[HeaderField.BaseId] = baseId;
    h[HeaderField.CurrentEpoch] = 0;
    region.headerF64[HeaderF64.OriginalStartMs] = startMs;
    // Written last: a region without the magic is never trusted by attach().
    Atomics.store(h, HeaderField.Magic, MAGIC);
    return region;
  }

  /** Maps an existing region (a later epoch, or a worker), checking its layout. */
  static attach(buffer: ArrayBuffer, params: LayoutParams): StatsRegion {
    const h = new Int32Array(buffer, 0, 16);
    const expected = hotRestartVersion(params);
    if (Atomics.load(h, HeaderField.Magic) !== MAGIC) throw new RegionMismatchError(expected, 'uninitialized');
    const found = `${h[HeaderField.FormatVersion]}.${h[HeaderField.MaxStats]}.${h[HeaderField.MaxColumns]}.${h[HeaderField.NameBytes]}`;
    if (found !== expected) throw new RegionMismatchError(expected, found);
    return new StatsRegion(buffer, computeLayout(params));
  }

  get originalStartMs(): number {
    return this.headerF64[HeaderF64.OriginalStartMs]!;
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
    for (let col = 0; col < this.layout.maxColumns; col++) {
      if (this.columnState(col) === ColumnState.Live && this.columnEpoch(col) !== epoch) {
        out.push({ column: col, pid: this.columns[col * 4 + ColumnField.Pid]! });
      }
    }
    return out;
  }

  columnState(col: number): ColumnState {
    return Atomics.load(this.columns, col * 4 + ColumnField.State) as ColumnState;
  }

  columnEpoch(col: number): number {
    return this.columns[col * 4 + ColumnField.Epoch]!;
  }

  /** Claims a free column for a writer of `epoch` (CAS, so two epochs never take the same one). */
  claimColumn(epoch: number, pid: number): number {
    for (let col = 0; col < this.layout.maxColumns; col++) {
      if (Atomics.compareExchange(this.columns, col * 4 + ColumnField.State, ColumnState.Free, ColumnState.Live) === ColumnState.Free) {
        this.columns[col * 4 + ColumnField.Epoch] = epoch;
        this.columns[col * 4 + ColumnField.Pid] = pid;
        return col;
      }
    }
    throw new ColumnsExhaustedError(this.layout.maxColumns);
  }

  retireColumn(col: number): void {
    Atomics.store(this.columns, col * 4 + ColumnField.State, ColumnState.Retired);
  }

  /** Returns a folded column to the free pool (its cells must already be zero). */
  freeColumn(col: number): void {
    this.columns[col * 4 + ColumnField.Epoch] = 0;
    this.columns[col * 4 + ColumnField.Pid] = 0;
    Atomics.store(this.columns, col * 4 + ColumnField.State, ColumnState.Free);
  }
}
