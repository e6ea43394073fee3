/**
 * The R summaries' tables are bounded and keep no joined keys: entries are interned ids
 * (`REntries`), counted against `maxTableEntries` as they are added (a Map holds at most 2^24
 * entries, and a profile can name more functions or lines), and a `basename#line` key is made
 * when it is read, not stored per line.
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder, isProfkitError } from '@profkit/core';
import { rAccounting, summarizeRprof } from '../src/index.js';

/** One sample per function `f0`…`f{n-1}`, each at line k + 1 of `file`. */
function profile(n: number, file: string) {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  for (let k = 0; k < n; k++) {
    const fn = b.internFunction({ name: `f${k}`, filename: file });
    b.addSample([b.internLocation({ functionId: fn, line: k + 1 })], [1n]);
  }
  return b.build();
}

function limitOf(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return isProfkitError(e) ? { code: e.code, option: e.detail?.option } : e;
  }
  return 'no error';
}

describe('R summary tables', () => {
  const p = profile(10, 'src/a#b.R');

  it('stop at maxTableEntries with PROFKIT_E_LIMIT naming the option', () => {
    const want = { code: 'PROFKIT_E_LIMIT', option: 'maxTableEntries' };
    expect(limitOf(() => summarizeRprof(p, { limits: { maxTableEntries: 5 } }))).toEqual(want);
    expect(limitOf(() => rAccounting(p, 'show', { maxTableEntries: 5 }))).toEqual(want);
    expect(limitOf(() => rAccounting(p, 'hide', { maxTableEntries: 5 }))).toEqual(want);
    // At the limit: all of them.
    expect(summarizeRprof(p, { limits: { maxTableEntries: 10 } }).byFunction.size).toBe(10);
  });

  it('look a line up by its basename#line key (a base name may contain #)', () => {
    const s = summarizeRprof(p);
    expect([...s.byLine.keys()]).toEqual(Array.from({ length: 10 }, (_, k) => `a#b.R#${k + 1}`));
    expect(s.byLine.get('a#b.R#3')).toEqual({ self: 1n, total: 1n, memory: 0n });
    expect(s.byLine.has('a#b.R#03')).toBe(false);
    expect(s.byLine.has('a#b.R#11')).toBe(false);
    expect(s.byLine.has('a#b.R')).toBe(false);
    expect(s.byFunction.get('f9')).toEqual({ self: 1n, total: 1n, memory: 0n });
  });

  it('long file names: one key per line, read when asked for', () => {
    const base = 'x'.repeat(100_000) + '.R';
    const s = summarizeRprof(profile(50, `/src/${base}`));
    expect(s.byLine.size).toBe(50);
    expect(s.byLine.get(`${base}#50`)).toEqual({ self: 1n, total: 1n, memory: 0n });
    expect(s.byLine.get(`${'x'.repeat(99_999)}y.R#50`)).toBeUndefined();
  });
});
