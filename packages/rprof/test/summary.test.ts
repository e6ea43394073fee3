import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRprofBytes, summarizeRprof } from '../src/index.js';
import { fixturesDir } from './helpers.js';

describe('summarizeRprof (summaryRprof’s rules, hand-computed on grammar.out)', () => {
  const s = summarizeRprof(readRprofBytes(readFileSync(join(fixturesDir, 'grammar.out'))).profile);
  const fn = (k: string) => {
    const e = s.byFunction.get(k);
    return e && [Number(e.self), Number(e.total), Number(e.memory)];
  };
  const ln = (k: string) => {
    const e = s.byLine.get(k);
    return e && [Number(e.self), Number(e.total)];
  };
  it('counts samples with frames or GC; memory-only samples are left out', () => {
    expect(s.samples).toBe(6n);
  });
  it('per function: self = innermost (<GC> for GC samples), total once per sample, memory of those samples', () => {
    expect(fn('f')).toEqual([2, 3, 0 + 180 + 80]);
    expect(fn('g')).toEqual([0, 3, 260]);
    expect(fn('<GC>')).toEqual([2, 2, 180 + 180]);
    expect(fn('x[["a"]]')).toEqual([1, 1, 710]);
    expect(fn('my fun')).toEqual([0, 1, 710]);
    expect(fn('h')).toEqual([1, 1, 0]);
    expect(fn('größe€')).toEqual([0, 1, 0]);
    expect(s.byFunction.size).toBe(10);
  });
  it('per line: basename#line, self = first srcref, <no location> without any', () => {
    expect(ln('a.R#3')).toEqual([1, 1]);
    expect(ln('a.R#4')).toEqual([1, 1]);
    expect(ln('a.R#9')).toEqual([0, 2]);
    expect(ln('b c.R#7')).toEqual([1, 1]);
    expect(ln('a.R#5')).toEqual([1, 1]);
    expect(ln('b c.R#8')).toEqual([0, 1]);
    expect(ln('<no location>')).toEqual([2, 2]);
    expect(s.byLine.size).toBe(7);
  });
});
