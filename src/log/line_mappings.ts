// A source map's `mappings` read for the few places log lines ask about. Node's SourceMap makes
// an object of every segment when it is built: 240 ms for a bundle's map, on the way to a start's
// first located log line. One pass here keeps, for each generated line, where its segments begin
// and the decoder's running state there; a lookup decodes that one line.

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const COMMA = 44;
const SEMICOLON = 59;

/** Where a generated place was written: the index of its source in the map's `sources`, and its 0-based line. */
export interface OriginalPlace {
  readonly source: number;
  readonly line: number;
}

/** Base64 character code -> its 6-bit value; -1 for anything else. */
function digitTable(): Int8Array {
  const table = new Int8Array(128).fill(-1);
  for (let i = 0; i < BASE64.length; i++) table[BASE64.charCodeAt(i)] = i;
  return table;
}

export class LineMappings {
  private readonly digits = digitTable();
  /** Offset in `mappings` of each generated line's first segment. */
  private readonly lineStarts: Int32Array;
  /** Per line, before its first segment: source index, original line, original column, name index (cumulative across lines). */
  private readonly states: Int32Array;
  /** Per line: 1 when the segment before it maps nowhere (a one-field segment), or there is none. */
  private readonly unmappedBefore: Uint8Array;
  /** Where find's decoding is in `mappings`. */
  private pos = 0;

  constructor(private readonly mappings: string) {
    let lines = 1;
    for (let i = 0; i < mappings.length; i++) if (mappings.charCodeAt(i) === SEMICOLON) lines++;
    this.lineStarts = new Int32Array(lines);
    this.states = new Int32Array(lines * 4);
    this.unmappedBefore = new Uint8Array(lines).fill(1);
    // One tight pass (this runs over millions of characters): the cumulative fields, and whether
    // the last segment ended so far mapped anywhere.
    const digits = this.digits;
    let source = 0;
    let originalLine = 0;
    let originalColumn = 0;
    let name = 0;
    let field = 0;
    let value = 0;
    let shift = 0;
    let unmapped = 1;
    let line = 0;
    for (let i = 0; i < mappings.length; i++) {
      const code = mappings.charCodeAt(i);
      if (code === SEMICOLON || code === COMMA) {
        if (field > 0) unmapped = field === 1 ? 1 : 0;
        field = 0;
        if (code === SEMICOLON) {
          line++;
          this.lineStarts[line] = i + 1;
          this.states[line * 4] = source;
          this.states[line * 4 + 1] = originalLine;
          this.states[line * 4 + 2] = originalColumn;
          this.states[line * 4 + 3] = name;
          this.unmappedBefore[line] = unmapped;
        }
        continue;
      }
      const digit = code < 128 ? digits[code]! : -1;
      if (digit < 0) throw new Error(`a source map's mappings has a character that is not base64 at ${i}`);
      value |= (digit & 31) << shift;
      if ((digit & 32) !== 0) {
        shift += 5;
        continue;
      }
      const decoded = (value & 1) === 1 ? -(value >>> 1) : value >>> 1;
      value = 0;
      shift = 0;
      if (field === 1) source += decoded;
      else if (field === 2) originalLine += decoded;
      else if (field === 3) originalColumn += decoded;
      else if (field === 4) name += decoded;
      field++;
    }
  }

  /**
   * Where the last segment at or before `column` (0-based) of generated `line` (0-based) was
   * written, as Node's SourceMap.findEntry finds it (a segment of an earlier line when this line
   * has none so far); null when that segment maps nowhere or there is none.
   */
  find(line: number, column: number): OriginalPlace | null {
    if (line < 0) return null;
    if (line >= this.lineStarts.length) return this.find(this.lineStarts.length - 1, Infinity);
    const state = Array.from(this.states.subarray(line * 4, line * 4 + 4));
    let found: OriginalPlace | null = this.unmappedBefore[line] === 1 ? null : { source: state[0]!, line: state[1]! };
    let generatedColumn = 0;
    this.pos = this.lineStarts[line]!;
    while (this.pos < this.mappings.length) {
      const code = this.mappings.charCodeAt(this.pos);
      if (code === SEMICOLON) break;
      if (code === COMMA) {
        this.pos++;
        continue;
      }
      generatedColumn += this.vlq();
      const mapped = this.rest(state);
      if (generatedColumn > column) break;
      found = mapped ? { source: state[0]!, line: state[1]! } : null;
    }
    return found;
  }

  /** The fields after a segment's generated column, added to `state`; true when there are any. */
  private rest(state: number[]): boolean {
    if (this.atSegmentEnd()) return false;
    for (let field = 0; field < 4 && !this.atSegmentEnd(); field++) state[field] = state[field]! + this.vlq();
    return true;
  }

  private atSegmentEnd(): boolean {
    if (this.pos >= this.mappings.length) return true;
    const code = this.mappings.charCodeAt(this.pos);
    return code === COMMA || code === SEMICOLON;
  }

  /** One base64 VLQ value at the position, which moves past it. */
  private vlq(): number {
    let value = 0;
    let shift = 0;
    for (;;) {
      const digit = this.digits[this.mappings.charCodeAt(this.pos++)] ?? -1;
      if (digit < 0) throw new Error(`a source map's mappings has a character that is not base64 at ${this.pos - 1}`);
      value |= (digit & 31) << shift;
      if ((digit & 32) === 0) break;
      shift += 5;
    }
    return (value & 1) === 1 ? -(value >>> 1) : value >>> 1;
  }
}
