/**
 * Values near the int64 bounds (issue 15 item 10: Go's pprof wraps such sums, a heap profile's
 * total then shows as -8192PB). Reports sum in unbounded bigints, so their totals are exact;
 * operations that write a profile (merge, diff, aggregate, scale) never wrap: a sum beyond int64
 * is a PROFKIT_E_RANGE error naming what overflowed, and diff's negation is exact.
 */

import { describe, expect, it } from 'vitest';
import {
  ErrorCodes,
  ProfileBuilder,
  ProfkitError,
  aggregateBy,
  aggregateStacks,
  diff,
  merge,
  reportTotal,
  scale,
  topReport,
  totalValue,
  treeReport,
  type Profile,
} from '../src/node/index.js';

const INT64_MAX = (1n << 63n) - 1n;
const BIG = INT64_MAX - 4096n;

/** Samples `[leaf, value]` under `main`; `twice` repeats the first sample's stack. */
function heap(values: [string, bigint][], facts: { duration_nanos?: bigint } = {}): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'inuse_space', unit: 'bytes' }], facts: { period: 1n, ...facts } });
  const loc = (n: string) => b.internLocation({ functionId: b.internFunction({ name: n }), line: 1 });
  const main = loc('main');
  for (const [leaf, v] of values) b.addSample([loc(leaf), main], [v]);
  return b.build();
}

function rangeError(f: () => unknown): ProfkitError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ProfkitError);
    expect((e as ProfkitError).code).toBe(ErrorCodes.RANGE);
    return e as ProfkitError;
  }
  throw new Error('expected a PROFKIT_E_RANGE error');
}

describe('reports sum beyond int64 exactly (pprof wraps to negative totals)', () => {
  const p = heap([['a', BIG], ['b', BIG], ['c', 1000n]]);
  const exact = 2n * BIG + 1000n;

  it('totals and cum values are the exact sums', () => {
    expect(totalValue(p, 0)).toBe(exact);
    expect(reportTotal(p, 0)).toBe(exact);
    const top = topReport(p);
    expect(top.total).toBe(exact);
    expect(top.table.entries.find((e) => e.name === 'main')?.cum).toBe(exact);
    expect(top.text).toContain('of 16384PB total');
    expect(top.text).not.toMatch(/-\d/);
    expect(treeReport(p).graph.nodes.find((n) => n.name === 'main')?.cum).toBe(exact);
  });
});

describe('operations that write a profile never wrap', () => {
  it('merge: identical samples whose sum leaves int64 are a range error naming the sample type', () => {
    const p = heap([['a', BIG]]);
    const e = rangeError(() => merge([p, p]));
    expect(e.message).toContain('inuse_space/bytes');
    expect(e.detail.rule).toBe('values written to a profile must fit in int64');
    // below the bound the sum is exact
    const q = heap([['a', INT64_MAX / 2n]]);
    expect(merge([q, q]).samples.value[0]).toBe((INT64_MAX / 2n) * 2n);
  });

  it('merge: only the whole sum must fit, whatever the order of the samples (a partial sum beyond int64 is no error)', () => {
    const values = [1n << 62n, -(1n << 62n) - 1n, -(1n << 63n), 1n];
    // In this order the partial sums pass -2^63 - 1; summed in any order the sum is -2^63.
    for (const order of [values, [values[0]! + values[3]!, values[1]!, values[2]!]]) {
      expect(merge([heap(order.map((v) => ['a', v]))]).samples.value).toEqual(new BigInt64Array([-(1n << 63n)]));
    }
  });

  it('merge: durations whose sum leaves int64 are a range error (not an invalid profile at write time)', () => {
    const p = heap([['a', 1n]], { duration_nanos: (1n << 62n) + (1n << 61n) });
    expect(rangeError(() => merge([p, p])).message).toContain('duration_nanos');
  });

  it('aggregate: combining samples beyond int64 is a range error', () => {
    const p = heap([['a', BIG], ['a', BIG]]);
    expect(rangeError(() => aggregateStacks(p)).message).toContain('inuse_space/bytes');
    // aggregateBy keeps one sample per input sample: nothing is summed
    expect(aggregateBy(p, 'function').samples.value).toEqual(new BigInt64Array([BIG, BIG]));
  });

  it('diff of a profile with itself is empty: the base is negated exactly (pprof shows -1B beyond 2^53)', () => {
    const p = heap([['a', BIG], ['b', (1n << 53n) + 1n]]);
    expect(diff(p, p, { labelBase: false }).samples.value.length).toBe(0);
    expect(topReport(diff(p, p)).table.entries.every((e) => e.flat === 0n && e.cum === 0n)).toBe(true);
    expect(scale(p, -1).samples.value).toEqual(new BigInt64Array([-BIG, -((1n << 53n) + 1n)]));
    expect(rangeError(() => scale(heap([['a', -(1n << 63n)]]), -1)).message).toContain('beyond int64');
  });
});
