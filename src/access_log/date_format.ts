// START_TIME's and the certificate dates' formats (Envoy 1.16's DateFormatter): strftime in UTC
// and the C locale, plus Envoy's own `%s` (seconds since the epoch) and `%f`/`%1f`..`%9f`
// (fractional seconds, 9 digits by default, truncated). Compiled once per format string. A date
// is a byte string (src/common/byte_string.ts): the pattern's own text prints as its UTF-8.

import { utf8Bytes } from '../common/byte_string';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MS_PER_DAY = 86_400_000;

/** Writes one piece of the date, given its time in ms since the epoch (UTC). */
type Piece = (ms: number, date: Date) => string;

/**
 * Envoy's default (AccessLogDateTimeFormatter): `2016-04-15T20:17:00.310Z`. The part up to the
 * seconds is made once per second, as most entries of a busy log fall in the second before.
 */
export class DefaultDateFormat {
  private second = NaN;
  /** `2016-04-15T20:17:00.` */
  private prefix = '';

  format(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      this.second = second;
      this.prefix = new Date(second * 1000).toISOString().slice(0, 20);
    }
    const millis = ms - second * 1000;
    return `${this.prefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${Math.floor(millis)}Z`;
  }
}

export class DateFormat {
  private readonly pieces: readonly Piece[];

  constructor(readonly pattern: string) {
    this.pieces = compile(pattern);
  }

  /** The date of `ms` (ms since the epoch) in this format. */
  format(ms: number): string {
    const date = new Date(ms);
    let out = '';
    for (const piece of this.pieces) out += piece(ms, date);
    return out;
  }
}

/** strftime's `%n` (or `%En`, `%-n`, ...): Envoy refuses a format that would write a newline. */
export const NEWLINE_SPECIFIER = /%[-_0^#]*[1-9]*(E|O)?n/;

const pad = (n: number, width: number, fill = '0') => String(n).padStart(width, fill);

function compile(format: string): Piece[] {
  const pieces: Piece[] = [];
  let literal = '';
  const flush = () => {
    if (literal === '') return;
    const text = utf8Bytes(literal);
    pieces.push(() => text);
    literal = '';
  };
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%' || i + 1 >= format.length) {
      literal += c;
      continue;
    }
    // Envoy's own specifiers first: %s, %f and %1f..%9f.
    const digit = format[i + 1]!;
    if (digit >= '1' && digit <= '9' && format[i + 2] === 'f') {
      flush();
      pieces.push(fraction(Number(digit)));
      i += 2;
      continue;
    }
    let j = i + 1;
    // The C locale's E and O modifiers change nothing.
    if ((format[j] === 'E' || format[j] === 'O') && j + 1 < format.length) j++;
    const conversion = conversionPiece(format[j]!);
    if (conversion === undefined) {
      // glibc writes an unknown conversion as it is.
      literal += format.slice(i, j + 1);
    } else if (typeof conversion === 'string') {
      literal += conversion;
    } else {
      flush();
      pieces.push(conversion);
    }
    i = j;
  }
  flush();
  return pieces;
}

function fraction(digits: number): Piece {
  // Our clock has milliseconds: the digits past them are zeros.
  return (ms) => pad(((ms % 1000) + 1000) % 1000, 3).padEnd(9, '0').slice(0, digits);
}

function conversionPiece(c: string): Piece | string | undefined {
  switch (c) {
    case '%':
      return '%';
    case 't':
      return '\t';
    case 'n':
      return '\n';
    case 's':
      return (ms) => String(Math.floor(ms / 1000));
    case 'f':
      return fraction(9);
    case 'Y':
      return (_, d) => String(d.getUTCFullYear());
    case 'C':
      return (_, d) => pad(Math.floor(d.getUTCFullYear() / 100), 2);
    case 'y':
      return (_, d) => pad(d.getUTCFullYear() % 100, 2);
    case 'm':
      return (_, d) => pad(d.getUTCMonth() + 1, 2);
    case 'd':
      return (_, d) => pad(d.getUTCDate(), 2);
    case 'e':
      return (_, d) => pad(d.getUTCDate(), 2, ' ');
    case 'H':
      return (_, d) => pad(d.getUTCHours(), 2);
    case 'k':
      return (_, d) => pad(d.getUTCHours(), 2, ' ');
    case 'I':
      return (_, d) => pad(hour12(d), 2);
    case 'l':
      return (_, d) => pad(hour12(d), 2, ' ');
    case 'M':
      return (_, d) => pad(d.getUTCMinutes(), 2);
    case 'S':
      return (_, d) => pad(d.getUTCSeconds(), 2);
    case 'p':
      return (_, d) => (d.getUTCHours() < 12 ? 'AM' : 'PM');
    case 'P':
      return (_, d) => (d.getUTCHours() < 12 ? 'am' : 'pm');
    case 'a':
      return (_, d) => DAYS[d.getUTCDay()]!.slice(0, 3);
    case 'A':
      return (_, d) => DAYS[d.getUTCDay()]!;
    case 'b':
    case 'h':
      return (_, d) => MONTHS[d.getUTCMonth()]!.slice(0, 3);
    case 'B':
      return (_, d) => MONTHS[d.getUTCMonth()]!;
    case 'j':
      return (_, d) => pad(dayOfYear(d), 3);
    case 'u':
      return (_, d) => String(d.getUTCDay() === 0 ? 7 : d.getUTCDay());
    case 'w':
      return (_, d) => String(d.getUTCDay());
    case 'U':
      return (_, d) => pad(Math.floor((dayOfYear(d) - 1 - d.getUTCDay() + 7) / 7), 2);
    case 'W':
      return (_, d) => pad(Math.floor((dayOfYear(d) - 1 - ((d.getUTCDay() + 6) % 7) + 7) / 7), 2);
    case 'V':
      return (_, d) => pad(isoWeek(d).week, 2);
    case 'G':
      return (_, d) => String(isoWeek(d).year);
    case 'g':
      return (_, d) => pad(isoWeek(d).year % 100, 2);
    case 'z':
      return '+0000';
    case 'Z':
      return 'GMT';
    case 'D':
    case 'x':
      return composite('%m/%d/%y');
    case 'F':
      return composite('%Y-%m-%d');
    case 'T':
    case 'X':
      return composite('%H:%M:%S');
    case 'R':
      return composite('%H:%M');
    case 'r':
      return composite('%I:%M:%S %p');
    case 'c':
      return composite('%a %b %e %H:%M:%S %Y');
    default:
      return undefined;
  }
}

function composite(format: string): Piece {
  const pieces = compile(format);
  return (ms, date) => pieces.map((piece) => piece(ms, date)).join('');
}

function hour12(d: Date): number {
  const h = d.getUTCHours() % 12;
  return h === 0 ? 12 : h;
}

function dayOfYear(d: Date): number {
  return Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / MS_PER_DAY) + 1;
}

/** ISO 8601 week number and its year: weeks start on Monday, week 1 holds the year's first Thursday. */
function isoWeek(d: Date): { year: number; week: number } {
  const day = (d.getUTCDay() + 6) % 7;
  const thursday = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day + 3));
  const year = thursday.getUTCFullYear();
  return { year, week: Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / MS_PER_DAY / 7) + 1 };
}
