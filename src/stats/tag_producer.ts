// Tag extraction, Envoy's way: a stat name such as `cluster.foo.upstream_rq_200` becomes the
// tag-extracted name `cluster.upstream_rq` with the tags response_code=200 and cluster_name=foo.
// Fixed tags (stats_tags' fixed_value) come first; then every rule runs against the full name
// (a later rule still sees what an earlier one matched) and the spans their first groups
// matched are cut out at the end. Rules anchored on a first name token (`^cluster\.`) run only
// for names with that token, so a name meets a handful of patterns rather than all of them.
// Pure and uncached (src/admin/stats/tag_extractor.ts caches).

import type { StatsConfig } from '../config/model';
import { DEFAULT_TAG_RULES, TagRuleSpec } from './default_tags';

export interface Tag {
  readonly name: string;
  readonly value: string;
}

export interface TaggedName {
  /** The name with every matched span cut out. */
  readonly name: string;
  /** Fixed tags, then rules without a first token, then the token's rules, each in config order. */
  readonly tags: readonly Tag[];
}

/** [start, end) of a span to cut. */
type Span = readonly [number, number];

/**
 * The literal first token of a pattern anchored as `^token\.` or `^token(?=\.)` (or `^token$`),
 * else '' (the rule runs for every name).
 */
export function firstTokenOf(pattern: string): string {
  if (!pattern.startsWith('^')) return '';
  const end = pattern.slice(1).search(/[^A-Za-z0-9_]/) + 1;
  if (end <= 1) return '';
  const rest = pattern.slice(end);
  const anchored = rest.startsWith('\\.') || rest.startsWith('(?=\\.)') || rest === '$';
  return anchored ? pattern.slice(1, end) : '';
}

/**
 * Where the pattern's first capturing group opens, when what precedes it can be wrapped in a
 * group of its own without changing the pattern's meaning (no `|` at its top level, no
 * backreference by number anywhere); else -1.
 */
export function firstGroupOpening(pattern: string): number {
  if (/\\[1-9]/.test(pattern)) return -1;
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
    } else if (c === '[') {
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
    } else if (c === '(') {
      if (pattern[i + 1] !== '?') return i;
      // A named group captures too; only lookarounds and (?: ) do not.
      if (pattern[i + 2] === '<' && pattern[i + 3] !== '=' && pattern[i + 3] !== '!') return -1;
      depth++;
    } else if (c === ')') {
      depth--;
    } else if (c === '|' && depth === 0) {
      return -1;
    }
  }
  return -1;
}

class TagRule {
  readonly firstToken: string;
  /**
   * The pattern with what precedes its first group captured as well (group 1): the first group
   * (now 2) starts where that ends. Cheaper than asking the engine for indices (flag `d`),
   * which costs an array per group per match, 400,000 names times.
   */
  private readonly regex: RegExp;

  constructor(
    readonly tagName: string,
    pattern: string,
    private readonly substr: string,
  ) {
    const opening = firstGroupOpening(pattern);
    if (opening < 0) throw new Error(`tag rule ${tagName}: no first group to cut in ${pattern}`);
    this.regex = new RegExp(`(${pattern.slice(0, opening)})${pattern.slice(opening)}`);
    this.firstToken = firstTokenOf(pattern);
  }

  /** On a match, adds the tag (unless a rule of the same name already did) and the span to cut. */
  apply(statName: string, tags: Tag[], cuts: Span[]): void {
    if (this.substr !== '' && !statName.includes(this.substr)) return;
    for (const t of tags) if (t.name === this.tagName) return;
    const match = this.regex.exec(statName);
    if (match === null) return;
    const cut = match[2] ?? '';
    tags.push({ name: this.tagName, value: match.length > 3 ? (match[3] ?? '') : cut });
    const start = match.index + (match[1] ?? '').length;
    cuts.push([start, start + cut.length]);
  }
}

/** Joined rather than concatenated: a flat string, which hashes faster as a key than a rope. */
function cutSpans(name: string, cuts: Span[]): string {
  if (cuts.length === 0) return name;
  cuts.sort((a, b) => a[0] - b[0]);
  const kept: string[] = [];
  let at = 0;
  for (const [start, end] of cuts) {
    if (start > at) kept.push(name.slice(at, start));
    at = Math.max(at, end);
  }
  kept.push(name.slice(at));
  return kept.join('');
}

export class TagProducer {
  private readonly fixedTags: readonly Tag[];
  private readonly anyName: TagRule[] = [];
  private readonly byFirstToken = new Map<string, TagRule[]>();

  /** @param config validated: tag names unique, a name-only specifier names a default rule */
  constructor(config: StatsConfig) {
    const specs: TagRuleSpec[] = config.useAllDefaultTags ? [...DEFAULT_TAG_RULES] : [];
    const fixed: Tag[] = [];
    for (const tag of config.statsTags) {
      if (tag.fixedValue !== null) fixed.push({ name: tag.tagName, value: tag.fixedValue });
      else specs.push(...DEFAULT_TAG_RULES.filter((r) => r.name === tag.tagName));
    }
    this.fixedTags = fixed;
    for (const spec of specs) {
      const rule = new TagRule(spec.name, spec.pattern, spec.substr);
      if (rule.firstToken === '') {
        this.anyName.push(rule);
      } else {
        const rules = this.byFirstToken.get(rule.firstToken) ?? [];
        rules.push(rule);
        this.byFirstToken.set(rule.firstToken, rules);
      }
    }
  }

  produceTags(statName: string): TaggedName {
    const tags = this.fixedTags.slice();
    const cuts: Span[] = [];
    for (const rule of this.anyName) rule.apply(statName, tags, cuts);
    const dot = statName.indexOf('.');
    if (dot >= 0) {
      for (const rule of this.byFirstToken.get(statName.slice(0, dot)) ?? []) rule.apply(statName, tags, cuts);
    }
    return { name: cutSpans(statName, cuts), tags };
  }
}
