/**
 * The filters' `compile` option: a caller (profkit web) compiles the string patterns with
 * `goPatternCompiler(re2js)` (Go's RE2: pprof's syntax, linear-time matching) instead of
 * JavaScript's backtracking `RegExp`, where `(a+)+$` against a long name never returns.
 */

import { thrownBy } from '@profkit/test-utils';
import * as re2js from 're2js';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCodes, ProfileBuilder, ProfileIndex, applyReportFilters, filtersKeepingLocations, goPatternCompiler, isProfkitError, resolveStack, topReport, type Profile, type ReportFilterOptions } from '../src/node/index.js';

const compileGo = goPatternCompiler(re2js);

/** A name on which a backtracking engine takes about 2^n steps for `(a+)+$`. */
const LONG_NAME = 'a'.repeat(50_000) + '!';

function build(samples: [string[], number, { key: string; str: string }[]?][]): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  for (const [frames, v, labels] of samples) {
    const ids = frames.map((name) => b.internLocation({ functionId: b.internFunction({ name, filename: `${name.slice(0, 8)}.go` }) }));
    b.addSample(ids, [v], labels);
  }
  return b.build();
}

const P = () =>
  build([
    [['runtime.mallocgc', 'main.work'], 1, [{ key: 'thread', str: 'Worker-1' }]],
    [['net/http.(*conn).serve', 'main.main'], 2, [{ key: 'thread', str: 'io' }]],
    [[LONG_NAME, 'main.main'], 3],
    [['éclair.bake', 'main.work'], 4],
  ]);

function stacks(p: Profile): string[] {
  const idx = new ProfileIndex(p);
  return Array.from({ length: p.samples.value.length }, (_, i) => `${resolveStack(p, i, idx).map((f) => (f.name.length > 100 ? 'LONG' : f.name)).join(' <- ')} = ${p.samples.value[i]}`);
}

describe('goPatternCompiler', () => {
  it("matches in pprof's (Go) syntax, which JavaScript's RegExp reads otherwise", () => {
    expect(compileGo('^\\pL+\\.', 'focus').test('éclair.bake')).toBe(true);
    expect(compileGo('n\\.(?i:WORK)', 'focus').test('main.work')).toBe(true);
    expect(compileGo('\\Amain\\z', 'focus', false).test('main')).toBe(true);
    expect(compileGo('malloc', 'dropFrames', true).test('runtime.mallocgc')).toBe(false);
  });

  it('returns on a pattern that backtracks exponentially, with the right answer', () => {
    expect(compileGo('(a+)+$', 'search').test(LONG_NAME)).toBe(false);
    expect(compileGo('(a+)+!$', 'search').test(LONG_NAME)).toBe(true);
  });

  it('refuses what Go refuses (a backreference) as PROFKIT_E_USAGE naming the option', () => {
    const e = thrownBy(() => compileGo('(a)\\1', 'tagFocus'));
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.USAGE);
    expect(isProfkitError(e) && e.detail.option).toBe('tagFocus');
    expect(String((e as Error).message)).toContain('tagFocus');
  });
});

describe('the filters with compile', () => {
  it('compile every string pattern of the filters with it, tag filters too', () => {
    const compile = vi.fn(compileGo);
    applyReportFilters(P(), { focus: 'main', ignore: 'x', hide: 'y', show: '.', showFrom: 'main', tagFocus: 'thread=W', tagIgnore: 'zz', tagShow: 'thread', pruneFrom: 'q', compile });
    expect(compile.mock.calls.map(([, option]) => option).sort()).toEqual(['focus', 'hide', 'ignore', 'pruneFrom', 'show', 'showFrom', 'tagFocus', 'tagIgnore', 'tagShow']);
  });

  it('run a crafted focus over a long name to the end (JavaScript RegExp would not return)', () => {
    expect(stacks(applyReportFilters(P(), { focus: '(a+)+$', compile: compileGo }))).toEqual([]);
    expect(stacks(applyReportFilters(P(), { ignore: '(a+)+!$', compile: compileGo }))).toEqual(['runtime.mallocgc <- main.work = 1', 'net/http.(*conn).serve <- main.main = 2', 'éclair.bake <- main.work = 4']);
    // top decides the filters per stack (stack-filters.ts): the same compile.
    const names = (options: ReportFilterOptions) => topReport(P(), options).table.entries.map((e) => e.name.length);
    expect(names({ ignore: '(a+)+$', compile: compileGo })).toEqual(names({}));
  });

  it('keep the results of ordinary patterns', () => {
    const cases: ReportFilterOptions[] = [
      { focus: 'main\\.work' },
      { ignore: '^runtime\\.' },
      { hide: 'malloc|serve' },
      { show: '^main' },
      { showFrom: 'http' },
      { pruneFrom: 'mallocgc' },
      { tagFocus: 'thread=^W' },
      { tagIgnore: 'thread:io' },
      { focus: '(?i)MAIN\\.WORK' },
    ];
    for (const c of cases) {
      expect(stacks(applyReportFilters(P(), { ...c, compile: compileGo })), JSON.stringify(c)).toEqual(stacks(applyReportFilters(P(), c)));
      expect(stacks(filtersKeepingLocations(P(), { ...c, compile: compileGo })), JSON.stringify(c)).toEqual(stacks(filtersKeepingLocations(P(), c)));
    }
  });

  it("take an empty pattern as unset (pprof's empty flag), per stack (top) as per sample, with or without compile", () => {
    const top = (options: ReportFilterOptions) => topReport(P(), options).table.entries.map((e) => `${e.name.length > 100 ? 'LONG' : e.name}=${e.flat}`);
    for (const compile of [undefined, compileGo]) {
      const focused = { focus: 'mallocgc', compile };
      expect(top(focused)).toEqual(['runtime.mallocgc=1', 'main.work=0']);
      for (const empty of ['ignore', 'hide', 'show', 'focus', 'tagIgnore'] as const) {
        const options = { ...focused, [empty]: '', ...(empty === 'focus' ? { ignore: 'main' } : {}) };
        expect(top(options), empty).toEqual(top({ ...options, [empty]: undefined }));
        expect(stacks(applyReportFilters(P(), options)), empty).toEqual(stacks(applyReportFilters(P(), { ...options, [empty]: undefined })));
      }
    }
  });

  it('report an invalid pattern as PROFKIT_E_USAGE naming the option', () => {
    for (const [option, filters] of [
      ['focus', { focus: 'a(' }],
      ['tagIgnore', { tagIgnore: 'thread=(x' }],
      ['show', { show: '\\8' }],
    ] as const) {
      const e = thrownBy(() => applyReportFilters(P(), { ...filters, compile: compileGo }));
      expect(isProfkitError(e) && e.code, option).toBe(ErrorCodes.USAGE);
      expect(isProfkitError(e) && e.detail.option).toBe(option);
    }
  });
});
