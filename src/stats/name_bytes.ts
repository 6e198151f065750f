// Where stat names lie, as UTF-8 bytes: the region's, read in place. Sorting and writing
// 950,000 names this way decodes none of them.

/** The name of `key` (a slot, or a position in a list) is `nameArray(key)[nameStart(key), nameStart(key) + nameLength(key))`. */
export interface NameBytes {
  nameArray(key: number): Uint8Array;
  nameStart(key: number): number;
  nameLength(key: number): number;
}
