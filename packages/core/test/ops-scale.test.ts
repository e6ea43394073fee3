import { errorCodeOf } from '@profkit/test-utils';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, ProfileIndex, diff, normalize, resolveStack, sampleRow, scale, topTable, type Profile } from '../src/node/index.js';

const TYPES = [
  { type: 'samples', unit: 'count' },
  { type: 'cpu', unit: 'nanoseconds' },
];

function meaning(p: Profile) {
  const idx = new ProfileIndex(p);
  return Array.from({ length: p.samples.value.length }, (_, i) => ({
    stack: resolveStack(p, i, idx).map((f) => f.name).join(';'),
    values: p.samples['.values'].map((c) => c[i]!),
    labels: sampleRow(p, i).labels,
  }));
}

const codeOf = errorCodeOf;

/** Samples given as [stack names leaf first, values]. */
function build(samples: [string[], (number | bigint)[]][], types = TYPES): Profile {
  const b = new ProfileBuilder({ sampleTypes: types });
  samples.forEach(([names, values], i) => {
    b.addSample(
      names.map((n) => b.internLocation({ functionId: b.internFunction({ name: n }) })),
      values,
    );
    b.setSampleExtension('fmt', 'row', i);
  });
  return b.build();
}

describe('scale', () => {
  it('rounds half away from zero and drops samples whose values all became zero', () => {
    const p = build([
      [['a'], [3, 1]],
      [['b'], [-3, 5]],
      [['c'], [1, -1]],
      [['d'], [0, 0]],
      [['e'], [2n ** 62n, 4]],
    ]);
    const s = scale(p, 0.5);
    expect(meaning(s).map((x) => [x.stack, x.values])).toEqual([
      ['a', [2n, 1n]],
      ['b', [-2n, 3n]],
      ['c', [1n, -1n]],
      ['e', [2n ** 61n, 2n]],
    ]);
    // Samples are subset, so per-sample extension columns follow them.
    expect(Array.from(s['.extensions'].fmt!.samples!.row as Float64Array)).toEqual([0, 1, 2, 4]);
    // The input is untouched.
    expect(p.samples['.values'][0]![0]).toBe(3n);
  });

  it('scales each sample type by its own ratio and leaves ratio-1 columns exact', () => {
    const big = 2n ** 60n + 1n;
    const p = build([
      [['a'], [big, 10]],
      [['b'], [0, 1]],
    ]);
    const s = scale(p, [1, 0.25]);
    // 10*0.25 = 2.5 -> 3 ; 1*0.25 -> 0, and b's first value is 0: dropped.
    expect(meaning(s).map((x) => x.values)).toEqual([[big, 3n]]);
    expect(codeOf(() => scale(p, [1]))).toBe(ErrorCodes.USAGE);
    expect(codeOf(() => scale(p, Number.NaN))).toBe(ErrorCodes.USAGE);
    expect(codeOf(() => scale(p, 1e300))).toBe(ErrorCodes.RANGE);
  });

  it('copies the profile unchanged when every ratio is 1 (zero samples included)', () => {
    const p = build([
      [['a'], [0, 0]],
      [['b'], [1, 2]],
    ]);
    expect(meaning(scale(p, 1))).toEqual(meaning(p));
  });
});

describe('normalize', () => {
  it('scales p so that its totals equal the base totals', () => {
    const base = build([[['x'], [10, 300]]]);
    const p = build([
      [['a'], [2, 50]],
      [['b'], [3, 100]],
    ]);
    // ratios 10/5 = 2 and 300/150 = 2
    expect(meaning(normalize(p, base)).map((x) => x.values)).toEqual([
      [4n, 100n],
      [6n, 200n],
    ]);
    const empty = build([[['a'], [0, 5]]]);
    // sum of samples is 0: ratio 0, so only the cpu column (ratio 300/5 = 60) stays.
    expect(meaning(normalize(empty, base)).map((x) => x.values)).toEqual([[0n, 300n]]);
    expect(codeOf(() => normalize(p, build([[['x'], [1]]], [TYPES[0]!])))).toBe(ErrorCodes.INCOMPATIBLE);
  });
});

describe('diff', () => {
  const base = () =>
    build([
      [['A', 'main'], [10, 100]],
      [['B', 'main'], [5, 50]],
    ]);
  const p = () =>
    build([
      [['A', 'main'], [4, 40]],
      [['C', 'main'], [6, 60]],
    ]);

  it('keeps base samples apart with pprof::base=true and negated values (pprof -diff_base)', () => {
    const d = diff(base(), p());
    const baseLabel = [{ key: 'pprof::base', str: 'true' }];
    expect(meaning(d)).toEqual([
      { stack: 'A;main', values: [4n, 40n], labels: [] },
      { stack: 'C;main', values: [6n, 60n], labels: [] },
      { stack: 'A;main', values: [-10n, -100n], labels: baseLabel },
      { stack: 'B;main', values: [-5n, -50n], labels: baseLabel },
    ]);
    // Reports see the difference per frame and use the base total (15 samples) for percentages.
    const t = topTable(d, { sampleTypeIndex: 0 });
    expect(t.total).toBe(15n);
    expect(t.entries.map((e) => [e.name, e.flat, e.cum])).toEqual([
      ['A', -6n, -6n],
      ['C', 6n, 6n],
      ['B', -5n, -5n],
      ['main', 0n, -5n],
    ]);
  });

  it('subtracts matching samples when base samples are not labelled (pprof -base)', () => {
    const d = diff(base(), p(), { labelBase: false });
    expect(meaning(d)).toEqual([
      { stack: 'A;main', values: [-6n, -60n], labels: [] },
      { stack: 'C;main', values: [6n, 60n], labels: [] },
      { stack: 'B;main', values: [-5n, -50n], labels: [] },
    ]);
    // Identical profiles cancel out completely.
    expect(diff(p(), p(), { labelBase: false }).samples.value.length).toBe(0);
  });

  it('normalizes p to the base totals first when asked', () => {
    const d = diff(base(), p(), { labelBase: false, normalize: true });
    // p totals (10, 100) scaled to base totals (15, 150): x1.5
    expect(meaning(d)).toEqual([
      { stack: 'A;main', values: [-4n, -40n], labels: [] },
      { stack: 'C;main', values: [9n, 90n], labels: [] },
      { stack: 'B;main', values: [-5n, -50n], labels: [] },
    ]);
  });
});
