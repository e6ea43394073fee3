/**
 * `cutFlameTree` (the flame tree cut at a width, walked from the samples) draws exactly the tree
 * `boundedFlameTree` draws at the same width (which flame-levels.test.ts checks against a
 * per-sample build): inline frames, two locations of one function, sums beyond 2^53, zero and
 * negative values, samples without frames; and counts the outermost frames it leaves out.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '@profkit/test-utils';
import { ProfileBuilder, boundedFlameTree, cutFlameTree, type FlameNode, type Profile } from '../src/node/index.js';
import { locationNameIds } from '../src/flame/cut.js';
import { deepRandomProfile } from './flame-profiles.js';
import { ProfileIndex, locationFrames } from '../src/views.js';

/** 300 samples of up to 7 of 12 locations over 6 functions, half the locations with inline frames. */
function randomProfile(seed: number, big: boolean): Profile {
  const r = seededRandom(seed);
  const int = (n: number) => Math.floor(r() * n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }, { type: 'samples', unit: 'count' }] });
  const fns = Array.from({ length: 6 }, (_, i) => b.internFunction({ name: `f${i}` }));
  const locs = Array.from({ length: 12 }, (_, i) =>
    b.internLocation({ functionId: fns[int(6)]!, line: i, inlinedInto: i % 2 === 0 ? [{ functionId: fns[int(6)]!, line: 100 + i }] : [] }),
  );
  for (let i = 0; i < 300; i++) {
    const stack = Array.from({ length: int(8) }, () => locs[int(locs.length)]!);
    b.addSample(stack, [big ? (1n << 58n) + BigInt(int(1000)) : BigInt(int(40) - 5), BigInt(1 + int(3))]);
  }
  return b.build();
}

/** Frames of `full` narrower than `threshold` whose caller is not: the ones a cut leaves out first. */
function outermostNarrow(full: FlameNode, threshold: number): number {
  let n = 0;
  const work = [full];
  while (work.length > 0) {
    for (const c of work.pop()!.children) {
      if (Number(c.value) < threshold) n++;
      else work.push(c);
    }
  }
  return n;
}

describe('cutFlameTree', () => {
  for (const big of [false, true]) {
    for (const minWidth of [0, 0.002, 0.01, 0.05, 0.3]) {
      it(`draws what boundedFlameTree draws at ${minWidth} of the total (${big ? 'sums beyond 2^53' : 'zeros and negatives'}), counting the outermost frames left out`, () => {
        const p = randomProfile(big ? 21 : 22, big);
        for (const t of [0, 1]) {
          const bounded = boundedFlameTree(p, t, minWidth);
          const cut = cutFlameTree(p, t, minWidth);
          expect(cut.tree).toEqual(bounded.tree);
          const full = boundedFlameTree(p, t, 0).tree;
          expect(cut.elided).toBe(outermostNarrow(full, minWidth * Number(full.value)));
          if (minWidth >= 0.05) expect(cut.elided).toBeGreaterThan(0);
        }
      });
    }
  }

  it('draws what boundedFlameTree draws when location ids are sparse, or unknown in some stacks (skipped, as locationFrames skips them)', () => {
    for (const big of [false, true]) {
      const dense = randomProfile(big ? 23 : 24, big);
      // Ids far apart: no id-indexed table, every id looked up in the index's map.
      const sparse = randomProfile(big ? 23 : 24, big);
      sparse.locations.location_id.forEach((id, r) => (sparse.locations.location_id[r] = id * 100_003));
      sparse.samples.locations.location_id.forEach((id, k) => (sparse.samples.locations.location_id[k] = id * 100_003));
      // Unknown ids: 0 (inside the dense table, no row) and one past it, in every fifth stack entry.
      const unknown = randomProfile(big ? 23 : 24, big);
      unknown.samples.locations.location_id.forEach((_id, k) => {
        if (k % 5 === 0) unknown.samples.locations.location_id[k] = k % 2 === 0 ? 0 : 1_000_000;
      });
      for (const p of [dense, sparse, unknown]) {
        for (const minWidth of [0, 0.01, 0.05]) {
          for (const t of [0, 1]) expect(cutFlameTree(p, t, minWidth).tree).toEqual(boundedFlameTree(p, t, minWidth).tree);
        }
      }
      expect(cutFlameTree(sparse, 0, 0).tree).toEqual(cutFlameTree(dense, 0, 0).tree);
    }
  });

  it('draws what boundedFlameTree draws for location ids of 2^31 and above (uint32 ids, not int32)', () => {
    const dense = randomProfile(24, false);
    const high = randomProfile(24, false);
    high.locations.location_id.forEach((id, r) => (high.locations.location_id[r] = 0x80000000 + id));
    high.samples.locations.location_id.forEach((id, k) => (high.samples.locations.location_id[k] = 0x80000000 + id));
    expect(boundedFlameTree(high, 0, 0).tree).toEqual(boundedFlameTree(dense, 0, 0).tree);
    for (const minWidth of [0, 0.05]) expect(cutFlameTree(high, 0, minWidth).tree).toEqual(boundedFlameTree(high, 0, minWidth).tree);
  });

  it('with countEveryFrame counts every frame left out as boundedFlameTree does: chains of one sample, shared callers, inline frames, sparse, unknown and high location ids, sums beyond 2^53', () => {
    /** Long chains of one sample under shared callers, some stacks repeated. */
    const deep = (seed: number): Profile => deepRandomProfile(seed, 150);
    const withIds = (seed: number, big: boolean, ids: (id: number, k: number) => number, of: 'samples' | 'both'): Profile => {
      const p = randomProfile(seed, big);
      if (of === 'both') p.locations.location_id.forEach((id, r) => (p.locations.location_id[r] = ids(id, -1)));
      p.samples.locations.location_id.forEach((id, k) => (p.samples.locations.location_id[k] = ids(id, k)));
      return p;
    };
    const profiles: [string, Profile][] = [
      ['deep', deep(31)],
      ['small values', randomProfile(22, false)],
      ['sums beyond 2^53', randomProfile(21, true)],
      ['sparse ids', withIds(23, false, (id) => id * 100_003, 'both')],
      ['unknown ids', withIds(24, true, (id, k) => (k % 5 === 0 ? (k % 2 === 0 ? 0 : 1_000_000) : id), 'samples')],
      ['ids of 2^31 and above', withIds(25, false, (id) => 0x80000000 + id, 'both')],
    ];
    for (const [what, p] of profiles) {
      for (const minWidth of [0, 0.002, 0.01, 0.05, 0.3, 1]) {
        for (const t of p.sample_types.type.keys()) {
          const bounded = boundedFlameTree(p, t, minWidth);
          const cut = cutFlameTree(p, t, minWidth, { countEveryFrame: true });
          const at = `${what}, type ${t}, min width ${minWidth}`;
          expect(cut.tree, at).toEqual(bounded.tree);
          expect(cut.frames, at).toBe(bounded.frames);
          expect(cut.elided, at).toBe(bounded.elided);
          // Frames left out under frames left out are counted too: more than the outermost.
          if (minWidth >= 0.05) expect(cut.elided, at).toBeGreaterThan(cutFlameTree(p, t, minWidth).elided);
        }
      }
      // The chains of one sample are where the count is taken at once: the deep profile has them.
      if (what === 'deep') expect(boundedFlameTree(p, 0, 0.3).elided).toBeGreaterThan(100);
    }
  });

  it('draws and counts what boundedFlameTree does past the ~4,096 samples the merging of equal stacks is decided on: stacks all different (a member a sample), or repeated (merged)', () => {
    /** `samples` samples over `stacks` random stacks of 1-12 of 40 locations (a third with an inline frame). */
    const profile = (seed: number, samples: number, stacks: number): Profile => {
      const r = seededRandom(seed);
      const int = (n: number) => Math.floor(r() * n);
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
      const fns = Array.from({ length: 25 }, (_, i) => b.internFunction({ name: `h${i}` }));
      const locs = Array.from({ length: 40 }, (_, i) => b.internLocation({ functionId: fns[int(25)]!, line: i, inlinedInto: i % 3 === 0 ? [{ functionId: fns[int(25)]!, line: 70 + i }] : [] }));
      const pool = Array.from({ length: stacks }, () => Array.from({ length: 1 + int(12) }, () => locs[int(locs.length)]!));
      for (let i = 0; i < samples; i++) b.addSample(stacks >= samples ? pool[i]! : pool[int(stacks)]!, [BigInt(int(30) - 2)]);
      return b.build();
    };
    for (const [what, p] of [['all different', profile(41, 9_000, 9_000)], ['repeated', profile(42, 9_000, 40)]] as const) {
      for (const minWidth of [0, 0.001, 0.02]) {
        const bounded = boundedFlameTree(p, 0, minWidth);
        const at = `${what}, min width ${minWidth}`;
        expect(cutFlameTree(p, 0, minWidth).tree, at).toEqual(bounded.tree);
        const counted = cutFlameTree(p, 0, minWidth, { countEveryFrame: true });
        expect(counted.tree, at).toEqual(bounded.tree);
        expect([counted.frames, counted.elided], at).toEqual([bounded.frames, bounded.elided]);
      }
    }
  });

  it('draws and counts what boundedFlameTree does where many members share runs of inline frames (locations of up to 8 lines, twins of equal names, stacks repeating them)', () => {
    /** 400 samples of stacks of 1-6 entries over 10 locations of 1-8 inline lines; locations 5-9 repeat the names of 0-4 (other lines). */
    const profile = (seed: number): Profile => {
      const r = seededRandom(seed);
      const int = (n: number) => Math.floor(r() * n);
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
      const fns = Array.from({ length: 7 }, (_, i) => b.internFunction({ name: `g${i}` }));
      const shapes = Array.from({ length: 5 }, () => Array.from({ length: 1 + int(8) }, () => fns[int(7)]!));
      const locs = Array.from({ length: 10 }, (_, i) => {
        const [outer, ...inlined] = shapes[i % 5]!;
        return b.internLocation({ functionId: outer!, line: i, inlinedInto: inlined.map((functionId, k) => ({ functionId, line: 100 * i + k })) });
      });
      const stacks = Array.from({ length: 25 }, () => Array.from({ length: 1 + int(6) }, () => locs[int(10)]!));
      for (let i = 0; i < 400; i++) b.addSample(stacks[int(25)]!, [BigInt(1 + int(50))]);
      return b.build();
    };
    for (const seed of [61, 62, 63]) {
      const p = profile(seed);
      for (const minWidth of [0, 0.01, 0.05, 0.2]) {
        const bounded = boundedFlameTree(p, 0, minWidth);
        const counted = cutFlameTree(p, 0, minWidth, { countEveryFrame: true });
        const at = `seed ${seed}, min width ${minWidth}`;
        expect(counted.tree, at).toEqual(bounded.tree);
        expect([counted.frames, counted.elided, counted.countStopped], at).toEqual([bounded.frames, bounded.elided, false]);
        expect(cutFlameTree(p, 0, minWidth).tree, at).toEqual(bounded.tree);
      }
    }
  });

  it('refuses a sample type that does not exist', () => {
    expect(() => cutFlameTree(randomProfile(1, false), 2, 0)).toThrow(/sample type index 2 is out of range/);
  });
});

describe('locationNameIds', () => {
  it("gives each location's frame names as locationFrames does, outermost first: inline frames, unsymbolized addresses, unknown function ids, names shared by functions", () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const f = ['a', 'b', 'c', ''].map((name, i) => b.internFunction({ name, filename: `f${i}.go` }));
    // A second function of name 'a' (another file): one name, one id.
    const a2 = b.internFunction({ name: 'a', filename: 'other.go' });
    const locs = [
      b.internLocation({ functionId: f[0]!, line: 1 }),
      b.internLocation({ functionId: f[1]!, line: 2, inlinedInto: [{ functionId: f[2]!, line: 3 }, { functionId: a2, line: 4 }] }),
      b.internLocation({ address: 0x4a2f }),
      b.internLocation({ address: 0 , line: 9 }),
      b.internLocation({ functionId: f[3]!, line: 5 }),
      b.internLocation({ functionId: f[2]!, line: 6 }),
    ];
    b.addSample(locs, [1n]);
    const p = b.build();
    // A location whose function id names no function (an invalid profile the views still draw).
    p.locations.function_id[5] = 999;
    const index = new ProfileIndex(p);
    const { names, start, ids } = locationNameIds(p, index);
    for (let r = 0; r < p.locations.location_id.length; r++) {
      const want = locationFrames(p, index, r)
        .reverse()
        .map((fr) => fr.name || '[unknown]');
      expect([...ids.subarray(start[r]!, start[r + 1]!)].map((id) => names[id])).toEqual(want);
    }
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('0x4a2f');
  });
});
