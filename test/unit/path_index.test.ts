import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RouteMatch } from '../../src/config/model';
import { RequestHead } from '../../src/http/message';
import { isPlainPathMatch, PathIndex } from '../../src/filters/http/path_index';
import { RouteMatcher } from '../../src/filters/http/route_match';

const PLAIN = { caseSensitive: true, headers: [], queryParameters: [], grpc: false };
const prefix = (p: string): RouteMatch => ({ ...PLAIN, prefix: p });
const exact = (p: string): RouteMatch => ({ ...PLAIN, path: p });

/** What a scan in order finds: the index must agree with it. */
function scan(matches: readonly RouteMatch[], path: string): number | undefined {
  const index = matches.findIndex((match) => new RouteMatcher(match).matches(new RequestHead('GET', path, false), () => null));
  return index < 0 ? undefined : index;
}

function indexOf(matches: readonly RouteMatch[]): PathIndex<number> {
  return new PathIndex(matches.map((_, i) => i), matches);
}

test('the earliest matching route wins, whether prefix or path, shorter or longer', () => {
  const matches = [prefix('/api/v2/'), exact('/api/v1/users'), prefix('/api/v1/'), prefix('/api/'), exact('/api/v2/special'), prefix('/')];
  const index = indexOf(matches);
  const cases: [string, number | undefined][] = [
    ['/api/v2/special', 0],
    ['/api/v1/users', 1],
    ['/api/v1/users?x=1', 1],
    ['/api/v1/users/7', 2],
    ['/api/v3', 3],
    ['/apix', 5],
    ['/', 5],
    ['*', undefined],
    ['', undefined],
  ];
  for (const [path, expected] of cases) assert.equal(index.first(path), expected, path);
});

test('a prefix reads the query too; a path stops at it', () => {
  const index = indexOf([prefix('/a?b'), exact('/a'), prefix('/z')]);
  assert.equal(index.first('/a?b=1'), 0);
  assert.equal(index.first('/a?c'), 1);
  assert.equal(index.first('/a#x'), undefined);
});

test('only case-sensitive prefix and path matches with no other condition are plain', () => {
  assert.equal(isPlainPathMatch(prefix('/x')), true);
  assert.equal(isPlainPathMatch(exact('/x')), true);
  assert.equal(isPlainPathMatch({ ...prefix('/x'), caseSensitive: false }), false);
  assert.equal(isPlainPathMatch({ ...PLAIN, safeRegex: '/x' }), false);
  assert.equal(isPlainPathMatch({ ...prefix('/x'), grpc: true }), false);
  assert.equal(isPlainPathMatch({ ...prefix('/x'), headers: [{ name: 'a', invert: false, specifier: { kind: 'present' } }] }), false);
  assert.equal(isPlainPathMatch({ ...prefix('/x'), runtimeFraction: { runtimeKey: 'k', defaultValue: { numerator: 1, denominator: 'HUNDRED' } } }), false);
});

test('agrees with a scan in order on random tables and paths', () => {
  // A small alphabet, so that prefixes share and nest often.
  let seed = 42;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const word = (max: number): string => {
    let out = '/';
    for (let i = random(max); i > 0; i--) out += 'ab/?'[random(4)];
    return out;
  };
  for (let table = 0; table < 200; table++) {
    const matches = Array.from({ length: 1 + random(12) }, () => (random(3) === 0 ? exact(word(4)) : prefix(word(4))));
    const index = indexOf(matches);
    for (let probe = 0; probe < 50; probe++) {
      const path = word(6);
      assert.equal(index.first(path), scan(matches, path), `${JSON.stringify(matches.map((m) => m.prefix ?? `=${m.path}`))} ${path}`);
    }
  }
});
