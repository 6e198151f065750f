import { escapeLogLine } from './escape';
import type { Severity } from './level';

/**
 * spdlog-style log line patterns (--log-format). A pattern is compiled once into a list of
 * field renderers; formatting a line then runs those renderers, never the pattern text.
 */

export const DEFAULT_LOG_FORMAT = '[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v';

/** Where a log call was made; `path` is relative to the package root: `src/server/supervisor.ts`. */
export interface SourceLocation {
  readonly path: string;
  readonly line: number;
  readonly functionName: string;
}

/** One log call, as a pattern sees it. */
export interface LogRecord {
  /** Whole seconds since the Unix epoch. */
  readonly seconds: number;
  /** Nanoseconds within that second. */
  readonly nanos: number;
  readonly level: Severity;
  readonly logger: string;
  readonly message: string;
  /** Null when the pattern prints no location, or the caller could not be found. */
  readonly location: SourceLocation | null;
}

export interface LineFormat {
  /** The whole line, end-of-line included. */
  format(record: LogRecord): string;
  /** Whether lines show the caller's location (%@ %s %g %# %!), which costs a stack capture. */
  readonly usesLocation: boolean;
}

export interface PatternContext {
  /** %t. */
  readonly threadId: number;
  /** %P. */
  readonly processId: number;
  /** --log-format-escaped. */
  readonly escaped: boolean;
}

/** --log-format-prefix-with-location 1: every `%v` becomes `[%g:%#] %v` (`%%v` is literal text). */
export function withLocationPrefix(pattern: string): string {
  return pattern.replace(/%%|%v/g, (token) => (token === '%v' ? '[%g:%#] %v' : token));
}

export function compilePattern(pattern: string, context: PatternContext): LineFormat {
  const fields: Field[] = [];
  let usesLocation = false;
  let literal = '';
  let consumed = 0;
  for (const token of pattern.matchAll(FLAG_TOKEN)) {
    literal += pattern.slice(consumed, token.index);
    consumed = token.index + token[0].length;
    const [, align, width, flag] = token;
    // spdlog drops a '%' (and any padding spec) that ends the pattern.
    if (flag === '') break;
    const field = fieldFor(flag, context);
    if (field === undefined) {
      // `%%` is a percent sign; spdlog prints an unknown flag as it was written, minus its padding.
      literal += flag === '%' ? '%' : `%${flag}`;
      continue;
    }
    if (literal !== '') fields.push(constant(literal));
    literal = '';
    usesLocation ||= LOCATION_FLAGS.has(flag);
    fields.push(width === '' ? field : padded(field, Math.min(Number(width), MAX_PAD_WIDTH), align));
  }
  literal += pattern.slice(consumed);
  if (literal !== '') fields.push(constant(literal));

  const times = new LocalTimeCache();
  const render = (record: LogRecord): string => {
    const time = times.at(record.seconds);
    let line = '';
    for (const field of fields) line += field(record, time);
    return line + '\n';
  };
  return {
    usesLocation,
    format: context.escaped ? (record) => escapeLogLine(render(record)) : render,
  };
}

/** `%`, an optional alignment (`-` left, `=` center), an optional width, then the flag character. */
const FLAG_TOKEN = /%([-=]?)(\d*)([\s\S]?)/g;

const MAX_PAD_WIDTH = 64;

const LOCATION_FLAGS: ReadonlySet<string> = new Set(['@', 's', 'g', '#', '!']);

/** The broken-down local time of one second (spdlog's std::tm). */
interface LocalTime {
  readonly year: number;
  /** 0-11. */
  readonly month: number;
  readonly day: number;
  /** 0 is Sunday. */
  readonly weekday: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  /** East of UTC is positive. */
  readonly utcOffsetMinutes: number;
}

type Field = (record: LogRecord, time: LocalTime) => string;

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const FULL_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
// spdlog's table, "Sept" included.
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sept', 'Oct', 'Nov', 'Dec'];
const FULL_MONTHS = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
];
const SHORT_LEVEL_NAMES: Readonly<Record<Severity, string>> = {
  trace: 'T', debug: 'D', info: 'I', warning: 'W', error: 'E', critical: 'C',
};

const pad2 = (value: number): string => (value < 10 ? `0${value}` : String(value));
const padTo = (value: number, digits: number): string => String(value).padStart(digits, '0');
// The spec's %I runs 01-12, so midnight and noon are both 12.
const hour12 = (t: LocalTime): number => t.hour % 12 || 12;
const amPm = (t: LocalTime): string => (t.hour >= 12 ? 'PM' : 'AM');
const shortDate = (t: LocalTime): string => `${pad2(t.month + 1)}/${pad2(t.day)}/${pad2(t.year % 100)}`;
const clockTime = (t: LocalTime): string => `${pad2(t.hour)}:${pad2(t.minute)}:${pad2(t.second)}`;

function utcOffset(t: LocalTime): string {
  const minutes = Math.abs(t.utcOffsetMinutes);
  const sign = t.utcOffsetMinutes < 0 ? '-' : '+';
  return `${sign}${pad2(Math.floor(minutes / 60))}:${pad2(minutes % 60)}`;
}

const FIELDS: ReadonlyMap<string, Field> = new Map<string, Field>([
  ['v', (r) => r.message],
  ['n', (r) => r.logger],
  ['l', (r) => r.level],
  ['L', (r) => SHORT_LEVEL_NAMES[r.level]],
  ['a', (_, t) => DAYS[t.weekday]],
  ['A', (_, t) => FULL_DAYS[t.weekday]],
  ['b', (_, t) => MONTHS[t.month]],
  ['B', (_, t) => FULL_MONTHS[t.month]],
  ['c', (_, t) => `${DAYS[t.weekday]} ${MONTHS[t.month]} ${t.day} ${clockTime(t)} ${t.year}`],
  ['C', (_, t) => pad2(t.year % 100)],
  ['Y', (_, t) => String(t.year)],
  ['D', (_, t) => shortDate(t)],
  ['x', (_, t) => shortDate(t)],
  ['m', (_, t) => pad2(t.month + 1)],
  ['d', (_, t) => pad2(t.day)],
  ['H', (_, t) => pad2(t.hour)],
  ['I', (_, t) => pad2(hour12(t))],
  ['M', (_, t) => pad2(t.minute)],
  ['S', (_, t) => pad2(t.second)],
  ['e', (r) => padTo(Math.floor(r.nanos / 1e6), 3)],
  ['f', (r) => padTo(Math.floor(r.nanos / 1e3), 6)],
  ['F', (r) => padTo(r.nanos, 9)],
  ['p', (_, t) => amPm(t)],
  ['r', (_, t) => `${pad2(hour12(t))}:${pad2(t.minute)}:${pad2(t.second)} ${amPm(t)}`],
  ['R', (_, t) => `${pad2(t.hour)}:${pad2(t.minute)}`],
  ['T', (_, t) => clockTime(t)],
  ['X', (_, t) => clockTime(t)],
  ['z', (_, t) => utcOffset(t)],
  ['@', (r) => (r.location === null ? '' : `${r.location.path}:${r.location.line}`)],
  ['s', (r) => (r.location === null ? '' : r.location.path.slice(r.location.path.lastIndexOf('/') + 1))],
  ['g', (r) => r.location?.path ?? ''],
  ['#', (r) => (r.location === null ? '' : String(r.location.line))],
  ['!', (r) => r.location?.functionName ?? ''],
]);

function fieldFor(flag: string, context: PatternContext): Field | undefined {
  switch (flag) {
    case 't':
      return constant(String(context.threadId));
    case 'P':
      return constant(String(context.processId));
    default:
      return FIELDS.get(flag);
  }
}

function constant(text: string): Field {
  return () => text;
}

/** spdlog padding: right-aligned by default, `-` left-aligns, `=` centers; longer text is kept whole. */
function padded(field: Field, width: number, align: string): Field {
  return (record, time) => {
    const text = field(record, time);
    const gap = width - text.length;
    if (gap <= 0) return text;
    if (align === '-') return text + ' '.repeat(gap);
    if (align === '=') {
      const before = Math.floor(gap / 2);
      return ' '.repeat(before) + text + ' '.repeat(gap - before);
    }
    return ' '.repeat(gap) + text;
  };
}

/** Breaks a time down once per second, as spdlog does, since consecutive lines share their second. */
class LocalTimeCache {
  private second = Number.NaN;
  private time: LocalTime | undefined;

  at(seconds: number): LocalTime {
    if (seconds !== this.second || this.time === undefined) {
      this.time = localTime(seconds);
      this.second = seconds;
    }
    return this.time;
  }
}

function localTime(seconds: number): LocalTime {
  const date = new Date(seconds * 1000);
  return {
    year: date.getFullYear(),
    month: date.getMonth(),
    day: date.getDate(),
    weekday: date.getDay(),
    hour: date.getHours(),
    minute: date.getMinutes(),
    second: date.getSeconds(),
    utcOffsetMinutes: -date.getTimezoneOffset(),
  };
}
