/**
 * The page's patterns (patterns.ts): the flame search and the filters run in pprof's syntax with
 * re2js, in linear time. A link with `q=(a+)+$` (or `focus=(a+)+$`) over long names hung the tab:
 * JavaScript's backtracking RegExp takes about 2^n steps there.
 */

import * as re2js from 're2js';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCodes, ProfileBuilder, isProfkitError } from '@profkit/core';
import { serializePprof } from '@profkit/pprof';
import { thrownBy } from '@profkit/test-utils';
import { ProfileSession, webRegistry } from '../src/app/engine.js';
import { searchMatches, searchMatchesInSlices } from '../src/app/flame.js';
import { MAX_SEARCH_STEPS, PATTERN_LIMITS, countedRepeatTotal, literalOf, searchedLength } from '../src/app/patterns.js';
import type { FlameLayout, ViewOptions } from '../src/app/protocol.js';
import { NO_FILTERS } from '../src/app/state.js';

/** Names on which `(a+)+$` backtracks exponentially (no `$` right after the a's). */
const LONG_NAMES = Array.from({ length: 20 }, (_, i) => 'a'.repeat(30_000 + i) + '!');
const NAMES = ['main', 'runtime.mallocgc', 'net/http.(*conn).serve', 'éclair.bake', 'Worker.run', ...LONG_NAMES];

function profile(): { name: string; bytes: Uint8Array } {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const at = (name: string) => b.internLocation({ functionId: b.internFunction({ name, filename: `${name.slice(0, 6)}.go` }) });
  const main = at('main');
  NAMES.slice(1).forEach((name, i) => b.addSample([at(name), main], [i + 1]));
  return { name: 'p.pb.gz', bytes: serializePprof(b.build()) };
}

const OPTIONS: ViewOptions = { sampleType: -1, by: 'function', cum: false, nodeFraction: -1, nodeCount: -1, ...NO_FILTERS };

async function flame(options: ViewOptions = OPTIONS): Promise<FlameLayout> {
  const s = await ProfileSession.open(webRegistry(), profile());
  return s.view(options, 'flame').flame!;
}

/** The names of the frames `pattern` marks. */
function searched(layout: FlameLayout, pattern: string): string[] {
  const m = searchMatches(layout, pattern)!;
  return [...new Set([...m.keys()].filter((i) => m[i]).map((i) => layout.names[layout.nameIndex[i]!]!))].sort();
}

describe('the flame search', () => {
  it('returns on a crafted pattern over long names, with the right frames', async () => {
    const layout = await flame();
    expect(searched(layout, '(a+)+$')).toEqual([]);
    expect(searched(layout, '(a+)+!$')).toEqual([...LONG_NAMES].sort());
  });

  it("reads pprof's (Go) syntax, which JavaScript's RegExp refuses or reads otherwise", async () => {
    const layout = await flame();
    expect(searched(layout, '(?i)WORKER')).toEqual(['Worker.run']);
    expect(searched(layout, '^\\pL+\\.bake')).toEqual(['éclair.bake']);
  });

  it('marks the frames JavaScript marked for ordinary patterns', async () => {
    const layout = await flame();
    for (const pattern of ['main', '^runtime\\.', 'http\\.\\(\\*conn\\)', 'mallocgc|serve', '[A-Z]\\w+\\.run$', 'a{20}!']) {
      const js = new RegExp(pattern);
      expect(searched(layout, pattern), pattern).toEqual([...new Set(layout.names.filter((n) => js.test(n)))].sort());
    }
  });

  it('reports an invalid pattern as PROFKIT_E_USAGE naming the search', async () => {
    const layout = await flame();
    const e = thrownBy(() => searchMatches(layout, 'a('));
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.USAGE);
    expect(isProfkitError(e) && e.detail.option).toBe('search');
  });
});

describe('the filters', () => {
  it('run a crafted focus and ignore over long names to the end', async () => {
    expect((await flame({ ...OPTIONS, focus: '(a+)+$' })).depth.length).toBe(1);
    const kept = await flame({ ...OPTIONS, ignore: '(a+)+$' });
    expect(kept.exactValue[0]).toBe(BigInt((NAMES.length - 1) * NAMES.length / 2));
  });

  it("read pprof's syntax (a (?i) group inside the pattern, \\pL)", async () => {
    const focused = await flame({ ...OPTIONS, focus: 'r\\.(?i:RUN)$' });
    expect(focused.names.filter((n) => n !== 'main' && n !== 'all' && n !== 'root')).toEqual(['Worker.run']);
    expect((await flame({ ...OPTIONS, tagFocus: '', show: '^\\pL+\\.bake$|^main$' })).names).toContain('éclair.bake');
  });

  it('report an invalid pattern as PROFKIT_E_USAGE naming the filter', async () => {
    const s = await ProfileSession.open(webRegistry(), profile());
    for (const [option, filters] of [['focus', { focus: 'a(' }], ['hide', { hide: '(a)\\1' }], ['tagIgnore', { tagIgnore: 'k=[' }]] as const) {
      const e = thrownBy(() => s.view({ ...OPTIONS, ...filters }, 'flame'));
      expect(isProfkitError(e) && e.code, option).toBe(ErrorCodes.USAGE);
      expect(isProfkitError(e) && e.detail.option).toBe(option);
    }
  });
});

/** The `PROFKIT_E_LIMIT` error `run` throws: its option. */
function limitOptionOf(run: () => unknown): unknown {
  const e = thrownBy(run);
  expect(isProfkitError(e) && e.code, String(e)).toBe(ErrorCodes.LIMIT);
  return isProfkitError(e) ? e.detail.option : undefined;
}

describe("a view's patterns are capped (a link can carry costly ones)", () => {
  it('a search longer than maxPatternLength, or compiling to more than maxPatternProgram instructions, is PROFKIT_E_LIMIT naming the search', async () => {
    const layout = await flame();
    expect(limitOptionOf(() => searchMatches(layout, 'a'.repeat(PATTERN_LIMITS.maxPatternLength + 1)))).toBe('search');
    // 45 characters, 5,000 atoms with their repeats (at the counted-repeat cap), 5,002 instructions (each \pL{1000} costs ~110 ms per 2,000-character name).
    const e = thrownBy(() => searchMatches(layout, '\\pL{1000}'.repeat(5)));
    expect(isProfkitError(e) && e.detail.option).toBe('search');
    expect(String(e)).toContain('compiled program size (5002) exceeds the limit of 5000');
    // Under the caps: a 4 KiB literal (4,002 instructions), a counted repeat of 1,000.
    expect(searched(layout, 'b'.repeat(PATTERN_LIMITS.maxPatternLength - 7) + '|Worker')).toEqual(['Worker.run']);
    expect(searched(layout, 'x{1000}|^Worker')).toEqual(['Worker.run']);
  });

  it("a tag filter's comma-separated pieces count together: past maxTotalPatternProgram, PROFKIT_E_LIMIT naming it", async () => {
    const s = await ProfileSession.open(webRegistry(), profile());
    /** `n` different pieces of 1,002 instructions each (a piece repeated is compiled once). */
    const pieces = (n: number) => Array.from({ length: n }, (_, i) => `[^${String.fromCharCode(97 + i)}]{1000}`).join(',');
    // 25 pieces in 274 characters (each 10 KB piece of such repeats was ~105 MB).
    expect(limitOptionOf(() => s.view({ ...OPTIONS, tagFocus: pieces(25) }, 'flame'))).toBe('tagFocus');
    expect(limitOptionOf(() => s.view({ ...OPTIONS, tagIgnore: 'k=' + pieces(25) }, 'top'))).toBe('tagIgnore');
    // One budget for all options: tagFocus's 16 pieces (16,032 instructions) compile before focus's 4,008, so focus is named.
    expect(limitOptionOf(() => s.view({ ...OPTIONS, focus: 'x{1000}|y{1000}|z{1000}|w{1000}', tagFocus: pieces(16) }, 'flame'))).toBe('focus');
    // Within the budget, and the same piece repeated, are fine (the profile has no labels: nothing is kept).
    expect(s.view({ ...OPTIONS, tagFocus: pieces(19) }, 'flame').flame!.depth.length).toBe(1);
    expect(s.view({ ...OPTIONS, tagFocus: '[^a]{1000},'.repeat(100) + 'x' }, 'flame').flame!.depth.length).toBe(1);
  });

  it('a pattern whose counted repeats add up past maxPatternProgram is refused before it compiles (4 KiB of them were 409,002 instructions)', async () => {
    const layout = await flame();
    const e = thrownBy(() => searchMatches(layout, '[^a]{1000}'.repeat(409)));
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
    expect(isProfkitError(e) && e.message).toContain('size with its counted repeats ({n,m}), at least');
    // Braces escaped, in a class or quoted are text; {n,m} counts m; {,m} is text as in Go.
    expect(countedRepeatTotal('[{1000}]\\{1000}\\Q{1000}\\E')).toBe(13);
    expect(countedRepeatTotal('a{3}x{2,5}y{7,}z{,4}')).toBe(20);
    expect(countedRepeatTotal('[]{}][[:alpha:]{9}]{4}\\x{41}{10}\\p{Greek}{10}\\pL{10}\\x41{10}\\.{10}')).toBe(55);
    // A repeated group repeats all it holds; flags and group heads are not atoms.
    expect(countedRepeatTotal('((a{10}){10}){10}')).toBe(1110); // a group is one more (an empty one too)
    expect(countedRepeatTotal('(?i)(?:ab|c){1000}(?P<n>d){2}')).toBe(4004);
    expect(countedRepeatTotal(`(?P<${'n'.repeat(100)}>(a{10}){10})`)).toBe(111);
    expect(countedRepeatTotal('(){1000}(){1000}(){1000}(){1000}')).toBe(4000); // 12,008 instructions
    expect(countedRepeatTotal('a{10}\\Q\\E{10}a+{10}')).toBe(100 + 20);
  });

  it('a repeated group is counted with what it holds: 1,000 copies of a 1,000-atom group is refused before it compiles', async () => {
    const layout = await flame();
    // Its repeats add up to 1,000; it compiled to 1,002,002 instructions (2 s, ~160 MB) before being refused.
    const e = thrownBy(() => searchMatches(layout, `(${'[^a]'.repeat(1000)}){1000}`));
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
    expect(isProfkitError(e) && e.detail.option).toBe('search');
    expect(isProfkitError(e) && e.message).toContain('size with its counted repeats ({n,m}), at least');
    // A count past Go's 1,000 is invalid (re2js says so), not a cap.
    expect(thrownBy(() => searchMatches(layout, 'a{1001}'))).toMatchObject({ code: ErrorCodes.USAGE });
  });

  it("the filters' patterns are at most maxTotalPatternLength together, each at most maxPatternLength, before anything compiles", async () => {
    const s = await ProfileSession.open(webRegistry(), profile());
    const long = 'x'.repeat(PATTERN_LIMITS.maxPatternLength);
    expect(limitOptionOf(() => s.view({ ...OPTIONS, hide: long + 'x' }, 'flame'))).toBe('hide');
    expect(limitOptionOf(() => s.view({ ...OPTIONS, focus: long, ignore: long, hide: long, show: long, tagIgnore: 'k=v' }, 'top'))).toBe('tagIgnore');
  });
});

/** The flame layout of `main` calling each of `names`. */
async function flameOf(names: string[]): Promise<FlameLayout> {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const at = (name: string) => b.internLocation({ functionId: b.internFunction({ name, filename: 'a.go' }) });
  const main = at('main');
  for (const name of names) b.addSample([at(name), main], [1]);
  const s = await ProfileSession.open(webRegistry(), { name: 'p.pb.gz', bytes: serializePprof(b.build()) });
  return s.view(OPTIONS, 'flame').flame!;
}

/** The flame search of `pattern` over `layout`, and the steps each re2js match may take: its program size × the characters it is given. */
function searchCounted(layout: FlameLayout, pattern: string): { names: string[]; mostSteps: number; matcherCalls: number } {
  let mostSteps = 0;
  let matcherCalls = 0;
  const test = re2js.RE2JS.prototype.test;
  const spy = vi.spyOn(re2js.RE2JS.prototype, 'test').mockImplementation(function (this: re2js.RE2JS, input: string) {
    matcherCalls++;
    mostSteps = Math.max(mostSteps, this.programSize() * input.length);
    return test.call(this, input);
  });
  try {
    return { names: searched(layout, pattern), mostSteps, matcherCalls };
  } finally {
    spy.mockRestore();
  }
}

describe('the flame search holds the page at most MAX_SEARCH_STEPS in one name', () => {
  it('a crafted pattern within the caps over a 20,000-character name reads its first MAX_SEARCH_STEPS / program size characters (it held the page 2.4 s)', async () => {
    const long = 'a'.repeat(20_000) + '1';
    const layout = await flameOf([long, 'main.run']);
    const crafted = '\\pL{1000}'.repeat(4) + '[0-9]';
    const { names, mostSteps } = searchCounted(layout, crafted);
    // Before: one match of 4,003 instructions over 20,001 characters, 80 M steps.
    expect(mostSteps).toBeLessThanOrEqual(MAX_SEARCH_STEPS);
    expect(mostSteps).toBeGreaterThan(MAX_SEARCH_STEPS / 2);
    // Its match (the `1` at 20,000) is past what is read: not found, as docs/web.md says.
    expect(names).toEqual([]);
    const program = re2js.RE2JS.compile(crafted).programSize();
    expect(searchedLength(long, program)).toBe(Math.floor(MAX_SEARCH_STEPS / program));
  });

  it('the same frames for ordinary searches of long names: a match at the end of a 20,000-character name is found', async () => {
    const long = 'std::vector<' + 'x'.repeat(20_000) + '>::push_back';
    const layout = await flameOf([long, 'main.run', 'runtime.mallocgc']);
    for (const [pattern, names] of [
      ['push_back$', [long]],
      ['(?i)PUSH_BACK|mallocgc', [long, 'runtime.mallocgc'].sort()],
      ['^main\\.', ['main.run']],
    ] as const) {
      const { names: found, mostSteps } = searchCounted(layout, pattern);
      expect(found).toEqual(names);
      expect(mostSteps).toBeLessThanOrEqual(MAX_SEARCH_STEPS);
    }
  });

  it("a match of a name read in part ends before the cut: `$` or `\\b` there is not the name's end, a greedy run there still matches", async () => {
    // `push_back` ends exactly where the search stops reading; the name goes on (`…push_backy…::size`).
    const atTheCut = 'push_back$|\\bpush_back\\b|(?i)VECTOR<X+$';
    const cutAt = searchedLength('x'.repeat(MAX_SEARCH_STEPS), re2js.RE2JS.compile(`(?:${atTheCut})(?s:.)`).programSize());
    const cut = 'std::vector<' + 'x'.repeat(cutAt - 'std::vector<push_back'.length) + 'push_back' + 'y'.repeat(50_000) + '>::size';
    const greedy = 'vector<' + 'x'.repeat(200_000) + '>';
    const layout = await flameOf([cut, greedy, 'a::push_back', 'b::push_back_n']);
    const found = (pattern: string) => searchCounted(layout, pattern).names.map((name) => (name === cut ? 'cut' : name === greedy ? 'greedy' : name));
    expect(found(atTheCut)).toEqual(['a::push_back']);
    expect(found('vector<x+')).toEqual(['cut', 'greedy']);
    // An unclosed `\Q` quotes to the end of the pattern.
    expect(found('std::\\Qvector<')).toEqual(['cut']);
  });

  it('a plain text (a name pasted, its dots escaped or not) is found in names of any length, without re2js', async () => {
    const long = 'ns::' + 'T<'.repeat(5_000) + 'int' + '>'.repeat(5_000) + '::run';
    const layout = await flameOf([long, 'main.run', 'mainXrun']);
    // 4,096 characters of it: a program of ~4,100 instructions reads 255 characters of a name.
    const pasted = long.slice(-4_096);
    const { names, matcherCalls } = searchCounted(layout, pasted);
    expect(names).toEqual([long]);
    expect(matcherCalls).toBe(0);
    expect(searchCounted(layout, 'main\\.run').names).toEqual(['main.run']);
    expect(searchCounted(layout, 'main.run').names).toEqual(['main.run', 'mainXrun']);
    expect([literalOf('main\\.run'), literalOf('main.run'), literalOf('a\\pL'), literalOf('(?i)a'), literalOf('a\\\\b'), literalOf('\\$x\\{')]).toEqual(['main.run', undefined, undefined, undefined, 'a\\b', '$x{']);
  });

  it('never cuts a surrogate pair in two', () => {
    const program = MAX_SEARCH_STEPS / 8;
    expect(searchedLength('a'.repeat(7) + '😀' + 'b', program)).toBe(7);
    expect(searchedLength('a'.repeat(6) + '😀' + 'b', program)).toBe(8);
    expect(searchedLength('a'.repeat(8), program)).toBe(8);
  });
});

describe('the flame search in slices', () => {
  it('gives the page its thread back between slices, with the same frames as searchMatches', async () => {
    const layout = await flame();
    let yields = 0;
    const slicing = { signal: new AbortController().signal, sliceMs: 0, yieldToPage: async () => void yields++ };
    const m = await searchMatchesInSlices(layout, '(a+)+!$|Worker', slicing);
    expect(m).toEqual(searchMatches(layout, '(a+)+!$|Worker'));
    // sliceMs 0: a slice per name.
    expect(yields).toBe(layout.names.length);
    expect(await searchMatchesInSlices(layout, '', slicing)).toBeUndefined();
    await expect(searchMatchesInSlices(layout, 'a(', slicing)).rejects.toMatchObject({ code: ErrorCodes.USAGE });
  });

  it('stops at the next slice once cancelled (a newer search), rejecting: the older result never comes', async () => {
    const layout = await flame();
    const controller = new AbortController();
    const order: string[] = [];
    const yieldToPage = async () => {
      order.push('slice');
      // The page typed further while this search ran.
      if (order.length === 3) controller.abort(new Error('a newer search'));
    };
    const search = searchMatchesInSlices(layout, '\\pL{1000}', { signal: controller.signal, sliceMs: 0, yieldToPage }).then(
      () => order.push('result'),
      (e: Error) => order.push(`cancelled: ${e.message}`),
    );
    await search;
    expect(order).toEqual(['slice', 'slice', 'slice', 'cancelled: a newer search']);
  });
});
