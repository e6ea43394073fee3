/**
 * `-top`'s inline markers of a diff from the two sides' samples (ops/inline-markers.ts), on
 * crafted sides whose markers follow by hand from pprof's rules, one test per way a node is
 * decided; and the regression of `top --diff-base --node-fraction 0` / `diff` without `-n`: the
 * report reads no stack table (its walk collected every call of both profiles: 30 s, 2.9 GB at
 * 200,000 samples). ops-diff-report.test.ts compares whole reports with the merged difference's.
 */
import { describe, expect, it } from 'vitest';
import { DiffReportBuilder, ProfileBuilder, diff, topReport, type Profile } from '../src/node/index.js';
import { INLINED_CALL, MAX_BATCH_CALLS, PLAIN_CALL, topInlineMarkers, type MarkerSide, type MarkerStats } from '../src/ops/inline-markers.js';

/** A side of `locations` (node ids, innermost line first) and `samples` (location rows leaf first, value). */
function side(locations: number[][], samples: [number[], number | bigint][], negated = false): MarkerSide {
  const offsets = Uint32Array.from([0, ...samples.map((_, i) => samples.slice(0, i + 1).reduce((n, [frames]) => n + frames.length, 0))]);
  const values = BigInt64Array.from(samples.map(([, v]) => BigInt(v)));
  const locNodeOffsets = Uint32Array.from([0, ...locations.map((_, r) => locations.slice(0, r + 1).reduce((n, l) => n + l.length, 0))]);
  return {
    offsets,
    frames: Int32Array.from(samples.flatMap(([frames]) => frames)),
    values,
    doubles: Float64Array.from(samples.map(([, v]) => Number(v))),
    absTotal: values.reduce((sum, v) => sum + (v < 0n ? -v : v), 0n),
    negated,
    locNodeOffsets,
    locNodeIds: Int32Array.from(locations.flat()),
  };
}

// Nodes: 0 = A, 1 = B, 2 = C, 3 = D. Locations: 0 = [B inlined into A], 1 = [B], 2 = [C], 3 = [A], 4 = [D].
const [A, B, C, D] = [0, 1, 2, 3];
const LOCATIONS = [[B, A], [B], [C], [A], [D]];
const ALL = new Uint8Array([1, 1, 1, 1]);

function markersOf(sides: MarkerSide[], cutoff: bigint, kept?: Uint8Array) {
  const stats: MarkerStats = { exactNodes: 0, passes: 0 };
  const out = topInlineMarkers(sides, 4, kept, ALL, cutoff, stats);
  return { b: out[B]!, stats };
}

describe('topInlineMarkers', () => {
  it('a plain call next to an inlined one makes partial-inline, proven by the weighted sum (no other pass)', () => {
    // C -> B (plain) and C -> A -> B (B inlined into A); values multiples of 10, cutoff 5.
    const next = side(LOCATIONS, [
      [[1, 2], 10],
      [[0, 2], 20],
    ]);
    const { b, stats } = markersOf([next, side(LOCATIONS, [])], 5n);
    expect(b).toBe(INLINED_CALL | PLAIN_CALL);
    expect(stats).toEqual({ exactNodes: 0, passes: 2 });
  });

  it('a plain call whose sides cancel out is no call at the cutoff: summed exactly (inline only)', () => {
    const next = side(LOCATIONS, [
      [[1, 2], 10],
      [[0, 2], 20],
    ]);
    const base = side(LOCATIONS, [[[1, 2], 10]], true);
    const { b, stats } = markersOf([next, base], 5n);
    expect(b).toBe(INLINED_CALL);
    // The weighted sum of B's plain calls is 0: counted, then collected, in two more passes per side.
    expect(stats).toEqual({ exactNodes: 1, passes: 6 });
  });

  it('a cutoff above the values\' common divisor sums the plain calls exactly, a call counted once per sample', () => {
    // C -> B twice in one sample (C B C B, leaf first B C B C): weight 10, not 20, below the cutoff 15.
    const next = side(LOCATIONS, [
      [[1, 2, 1, 2], 10],
      [[0, 2], 20],
    ]);
    expect(markersOf([next, side(LOCATIONS, [])], 15n)).toEqual({ b: INLINED_CALL, stats: { exactNodes: 1, passes: 6 } });
    // A second sample makes it 20: at the cutoff.
    const more = side(LOCATIONS, [
      [[1, 2, 1, 2], 10],
      [[1, 2], 10],
      [[0, 2], 20],
    ]);
    expect(markersOf([more, side(LOCATIONS, [])], 15n).b).toBe(INLINED_CALL | PLAIN_CALL);
  });

  it('a cutoff of 0 takes every call made, and no call never made', () => {
    const next = side(LOCATIONS, [
      [[1, 2], 10],
      [[0, 2], 20],
    ]);
    const base = side(LOCATIONS, [[[1, 2], 10]], true);
    expect(markersOf([next, base], 0n)).toEqual({ b: INLINED_CALL | PLAIN_CALL, stats: { exactNodes: 0, passes: 2 } });
    // Location 0 ([B inlined into A]) in no sample: B has no inlined call.
    expect(markersOf([side(LOCATIONS, [[[1, 2], 10]])], 0n).b).toBe(0);
  });

  it('a callee whose lines above were left out is called inlined from above: its calls collected as met', () => {
    // A trimmed: C -> [B (A left out)] is an inlined call from C, D -> [B] a plain one.
    const kept = new Uint8Array([0, 1, 1, 1]);
    const next = side(LOCATIONS, [
      [[0, 2], 20],
      [[1, 4], 10],
    ]);
    expect(markersOf([next], 5n, kept)).toEqual({ b: INLINED_CALL | PLAIN_CALL, stats: { exactNodes: 1, passes: 1 } });
    // The same call inlined in one sample and plain in another is one call, not inlined.
    expect(markersOf([side(LOCATIONS, [[[0, 2], 20]]), side(LOCATIONS, [[[1, 2], 10]])], 5n, kept).b).toBe(PLAIN_CALL);
  });

  it('past MAX_BATCH_CALLS calls collected as met, the node is summed in passes instead: the same markers', () => {
    // A trimmed as above; C -> [B (A left out)] in MAX_BATCH_CALLS + 1 samples of value 1, D -> [B] once, 10.
    const kept = new Uint8Array([0, 1, 1, 1]);
    const inlined = MAX_BATCH_CALLS + 1;
    // (Built here: `side` sums its offsets in quadratic time.)
    const next: MarkerSide = {
      ...side(LOCATIONS, []),
      offsets: Uint32Array.from({ length: inlined + 2 }, (_, i) => 2 * i),
      frames: Int32Array.from({ length: 2 * (inlined + 1) }, (_, k) => (k < 2 * inlined ? [0, 2][k % 2]! : [1, 4][k % 2]!)),
      values: BigInt64Array.from({ length: inlined + 1 }, (_, i) => (i < inlined ? 1n : 10n)),
      doubles: Float64Array.from({ length: inlined + 1 }, (_, i) => (i < inlined ? 1 : 10)),
      absTotal: BigInt(inlined + 10),
    };
    expect(markersOf([next], 5n, kept)).toEqual({ b: INLINED_CALL | PLAIN_CALL, stats: { exactNodes: 1, passes: 3 } });
    // The plain call cancelled by the base: inline only.
    expect(markersOf([next, side(LOCATIONS, [[[1, 4], 10]], true)], 5n, kept)).toEqual({ b: INLINED_CALL, stats: { exactNodes: 1, passes: 6 } });
  });

  it('sums past 2^53 are summed exactly in bigints', () => {
    // C -> B weighs 2^60 + 1 - 2^60 = 1: at the cutoff 1 (in doubles 2^60 + 1 rounds to 2^60, and
    // the weight to 0). The sides' doubles are those rounded values: only |values| summing past
    // 2^53 sends the sums to bigints.
    const big = 2n ** 60n;
    const next = side(LOCATIONS, [
      [[1, 2], big + 1n],
      [[0, 2], big],
    ]);
    const base = side(LOCATIONS, [[[1, 2], big]], true);
    expect(markersOf([next, base], 1n).b).toBe(INLINED_CALL | PLAIN_CALL);
    expect(markersOf([next, base], 2n).b).toBe(INLINED_CALL);
  });

  it('plans locations of more kept lines than a cache line holds in one pass (a hang guard, not a timing)', () => {
    // 100,000 locations of 4 lines each, their pairs past the packed slots: appending each to a
    // copy of the others took ~9 minutes (10,000 locations 4.5 s). Location r holds nodes 4r..4r+3.
    const nLocations = 100_000;
    const last = nLocations - 1;
    // (Built here: `side` sums its offsets in quadratic time.)
    const one: MarkerSide = {
      ...side([], []),
      offsets: Uint32Array.from([0, 1]),
      frames: Int32Array.from([last]),
      values: BigInt64Array.from([10n]),
      doubles: Float64Array.from([10]),
      absTotal: 10n,
      locNodeOffsets: Uint32Array.from({ length: nLocations + 1 }, (_, r) => 4 * r),
      locNodeIds: Int32Array.from({ length: 4 * nLocations }, (_, k) => k),
    };
    const out = topInlineMarkers([one], 4 * nLocations, undefined, new Uint8Array(4 * nLocations).fill(1), 0n);
    const marked = [...out.keys()].filter((n) => out[n] !== 0);
    expect(marked).toEqual([4 * last, 4 * last + 1, 4 * last + 2]);
    expect(marked.map((n) => out[n])).toEqual([INLINED_CALL, INLINED_CALL, INLINED_CALL]);
  });
});

/** A profile of `samples` random stacks over 300 functions, every other one inlined into the next. */
function randomStacks(seed: number, samples: number): Profile {
  let state = seed;
  const rnd = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  b.internMapping({ filename: '/bin/app', memoryStart: 0x1000n, memoryLimit: 0x100000n });
  const fns = Array.from({ length: 300 }, (_, i) => b.internFunction({ name: `pkg.f${i}`, filename: 'a.go' }));
  for (let i = 0; i < samples; i++) {
    const stack = Array.from({ length: 20 }, () => {
      const f = Math.floor(rnd() * 300);
      return f % 2 ? b.internLocation({ functionId: fns[f]!, line: 1, inlinedInto: [{ functionId: fns[(f + 1) % 300]!, line: 2 }] }) : b.internLocation({ functionId: fns[f]!, line: 1 });
    });
    b.addSample(stack, [BigInt(1 + Math.floor(rnd() * 5)) * 10_000_000n]);
  }
  return b.build();
}

describe('top of a diff showing every node', () => {
  it('reads no stack table (its walk collected every call of both profiles) and prints what the merged difference does', () => {
    const next = randomStacks(1, 400);
    const base = randomStacks(2, 300);
    for (const options of [{ nodeFraction: 0 }, {}, { by: 'line' as const }]) {
      const o = { ...options, sampleTypeIndex: 0 };
      const builder = new DiffReportBuilder(o);
      expect(builder.addNew(next)).toBeUndefined();
      expect(builder.addBase(base)).toBeUndefined();
      const input = builder.input();
      const source = input.prepare(0, o).graphSource({ ...o, nodeFraction: o.nodeFraction ?? 0.005 }, false);
      // Before: the stacks cut to the shown nodes, here every frame of 700 samples of 20 frames.
      expect(source.g.stacks.length).toBe(0);
      expect(source.inlineMarkers).toBeDefined();
      expect(topReport(input, o).text).toBe(topReport(diff(base, next), o).text);
    }
  });
});
