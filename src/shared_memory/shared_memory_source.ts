// Where the stats region's objects come from: POSIX shared memory through the native addon in
// the proxy, plain ArrayBuffers in unit tests. Both run the same region code.

export interface SharedMemorySource {
  /** A new zero-filled object of `bytes`, fully backed (a full /dev/shm fails here, not later). */
  create(name: string, bytes: number): ArrayBuffer;
  /** An existing object, whole. */
  open(name: string): ArrayBuffer;
  unlink(name: string): void;
}

export class NoSuchObjectError extends Error {}

/** Objects in this process's heap: "processes" of a test share one instance. */
export class HeapMemory implements SharedMemorySource {
  private readonly objects = new Map<string, ArrayBuffer>();

  create(name: string, bytes: number): ArrayBuffer {
    if (this.objects.has(name)) throw new Error(`${name} exists`);
    const buffer = new ArrayBuffer(bytes);
    this.objects.set(name, buffer);
    return buffer;
  }

  open(name: string): ArrayBuffer {
    const buffer = this.objects.get(name);
    if (!buffer) throw new NoSuchObjectError(`${name} does not exist`);
    return buffer;
  }

  unlink(name: string): void {
    if (!this.objects.delete(name)) throw new NoSuchObjectError(`${name} does not exist`);
  }

  /** Bytes of every object (tests of what a region costs). */
  totalBytes(): number {
    let total = 0;
    for (const b of this.objects.values()) total += b.byteLength;
    return total;
  }
}
