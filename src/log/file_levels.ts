import type { LogLevel } from './level';

interface FileLevelRule {
  readonly glob: string;
  readonly matcher: RegExp;
  readonly level: LogLevel;
}

/**
 * Fine-grain logging's per-file levels, set by glob over the paths loggers show
 * (`src/upstream/lb/ring_hash.ts`). The latest rule matching a file decides its level.
 */
export class FileLevelRules {
  private rules: FileLevelRule[] = [];

  /** Adds a rule, replacing an earlier one for the same glob. */
  set(glob: string, level: LogLevel): void {
    this.rules = this.rules.filter((rule) => rule.glob !== glob);
    this.rules.push({ glob, matcher: globMatcher(glob), level });
  }

  levelFor(path: string): LogLevel | undefined {
    for (let i = this.rules.length - 1; i >= 0; i--) {
      const rule = this.rules[i];
      if (rule.matcher.test(path)) return rule.level;
    }
    return undefined;
  }

  /** The rules as set, oldest first: `[glob, level]`. */
  entries(): [glob: string, level: LogLevel][] {
    return this.rules.map((rule) => [rule.glob, rule.level]);
  }

  clear(): void {
    this.rules = [];
  }
}

const GLOB_TOKEN = /\*\*\/|\*\*|\*|\?|[.+^${}()|[\]\\]/g;

const GLOB_SYNTAX: Readonly<Record<string, string>> = {
  '**/': '(?:.*/)?',
  '**': '.*',
  '*': '[^/]*',
  '?': '[^/]',
};

// `*` and `?` stay within one path segment; `**` spans segments: `src/upstream/**`, `**/pool.ts`.
export function globMatcher(glob: string): RegExp {
  const source = glob.replace(GLOB_TOKEN, (token) => GLOB_SYNTAX[token] ?? `\\${token}`);
  return new RegExp(`^${source}$`);
}
